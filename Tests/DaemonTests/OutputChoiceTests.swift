import DaemonCore
import Testing

/// `--output`'s values, and the guess made from the raw command line, before it is parsed,
/// of whether the daemon will open an ALSA device (its configuration then loads meanwhile).
struct OutputChoiceTests {
    @Test func choicesParse() {
        #expect(OutputChoice(argument: "auto") == .auto)
        #expect(OutputChoice(argument: "alsa") == .alsa(device: "default"))
        #expect(OutputChoice(argument: "alsa:hw:1,0") == .alsa(device: "hw:1,0"))
        #expect(OutputChoice(argument: "null") == .null)
        #expect(OutputChoice(argument: "fifo:/tmp/snapfifo")?.description == "fifo:/tmp/snapfifo?format=44100:16:2")
        for bad in ["", "alsa:", "fifo:", "pulse", "fifo:/tmp/f?format=44100"] {
            #expect(OutputChoice(argument: bad) == nil, "\(bad)")
        }
    }

    @Test func theDefaultOutputAndALSAOnesOpenALSA() {
        for arguments in [[], ["a.mp3"], ["--no-state", "a.mp3"], ["--output", "auto"], ["--output", "alsa"],
                          ["--output=alsa:pulsenull", "a.mp3"], ["--output", "null", "--output", "alsa:hw:0"],
                          ["--output", "fifo:/tmp/f", "--output=auto"]] {
            #expect(OutputChoice.commandLineMayOpenALSA(arguments), "\(arguments)")
        }
    }

    @Test func otherOutputsHelpAndVersionDoNot() {
        for arguments in [["--output", "null"], ["--output=null", "a.mp3"], ["--output", "fifo:/tmp/snapfifo"],
                          ["--output", "null", "--output", "fifo:/tmp/f"], ["--help"], ["-h"], ["--version"],
                          ["--output", "alsa", "--help"], ["--output", "bogus"]] {
            #expect(!OutputChoice.commandLineMayOpenALSA(arguments), "\(arguments)")
        }
    }

    /// After `--`, everything is a file: one named `--output` or `--help` changes nothing.
    @Test func filesAfterDoubleDashAreNotOptions() {
        #expect(OutputChoice.commandLineMayOpenALSA(["--", "--help"]))
        #expect(OutputChoice.commandLineMayOpenALSA(["--", "--output", "null"]))
        #expect(!OutputChoice.commandLineMayOpenALSA(["--output", "null", "--", "--output", "alsa"]))
    }
}
