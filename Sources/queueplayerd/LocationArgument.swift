import ArgumentParser
import DaemonCore

extension LocationChoice: ExpressibleByArgument {
    public var defaultValueDescription: String { description }

    /// swift-argument-parser has no option whose value may be left out: a bare `--location`
    /// (last, or followed by anything that does not start with `gpsd`) becomes `--location=gpsd`,
    /// so `--location song.mp3` still queues the song, while `--location gpsd:host:99999` is
    /// still refused as a bad value. Nothing after `--` is touched.
    static func completingBareOption(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                result += arguments[index...]
                break
            }
            if argument == "--location" && (index + 1 == arguments.count || !arguments[index + 1].hasPrefix("gpsd")) {
                result.append("--location=gpsd")
            } else {
                result.append(argument)
            }
            index += 1
        }
        return result
    }
}
