import Feeds
import Testing

/// `itunes:duration` in its forms.
@Suite struct EpisodeDurationTests {
    @Test(arguments: [
        ("3723", Duration.seconds(3723)), ("1:02:03", .seconds(3723)), ("01:02:03", .seconds(3723)), ("62:03", .seconds(3723)),
        ("0:07", .seconds(7)), ("90:00", .seconds(5400)), ("3723.5", .milliseconds(3_723_500)), ("1:02:03.250", .milliseconds(3_723_250)),
        (" 12:34 \n", .seconds(754)), ("0", .zero),
    ])
    func readable(_ text: String, _ duration: Duration) {
        #expect(EpisodeDuration.parse(text) == duration)
    }

    @Test(arguments: ["", "abc", "1:2:3:4", "1:60", "1:00:60", "-5", "1::2", ":30", "1.5:00", "12.", ".5", "1e3", "1,5",
                      "9999999999", "١٢", "1:02 min"])
    func unreadable(_ text: String) {
        #expect(EpisodeDuration.parse(text) == nil)
    }
}
