#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A file's ReplayGain values: the gain (dB) that brings the track, or the album it belongs
/// to, to ReplayGain's reference level, and its sample peak (1 is full scale).
///
/// Read from the ID3v2 `TXXX` frames that taggers write (`REPLAYGAIN_TRACK_GAIN` "-6.50 dB",
/// `REPLAYGAIN_TRACK_PEAK` "0.988", the album's likewise; the description in any case);
/// ``MPG123Decoder`` falls back on what libmpg123 itself found (an `RVA2` frame, the LAME
/// header's gain) when there are none.
public struct ReplayGainInfo: Sendable, Hashable {
    public var trackGain: Double?
    public var trackPeak: Double?
    public var albumGain: Double?
    public var albumPeak: Double?

    public init(trackGain: Double? = nil, trackPeak: Double? = nil, albumGain: Double? = nil, albumPeak: Double? = nil) {
        self.trackGain = trackGain
        self.trackPeak = trackPeak
        self.albumGain = albumGain
        self.albumPeak = albumPeak
    }

    /// The values of `id3`'s `TXXX` frames; nil when neither gain is there.
    public init?(_ id3: ID3Tags) {
        func value(_ name: String, unit: String?) -> Double? {
            guard let text = id3.extras.first(where: { $0.description.uppercased() == name })?.values.first else { return nil }
            return Self.number(text, unit: unit)
        }
        self.init(trackGain: value("REPLAYGAIN_TRACK_GAIN", unit: "DB"), trackPeak: value("REPLAYGAIN_TRACK_PEAK", unit: nil),
                  albumGain: value("REPLAYGAIN_ALBUM_GAIN", unit: "DB"), albumPeak: value("REPLAYGAIN_ALBUM_PEAK", unit: nil))
        if trackGain == nil && albumGain == nil { return nil }
    }

    /// The gain and peak for `album` (else the track's): each falls back on the other, as
    /// mpd's `ReplayGainInfo::Get` does.
    public func values(album: Bool) -> (gain: Double, peak: Double?)? {
        let first = album ? (albumGain, albumPeak) : (trackGain, trackPeak)
        let second = album ? (trackGain, trackPeak) : (albumGain, albumPeak)
        if let gain = first.0 { return (gain, first.1) }
        if let gain = second.0 { return (gain, second.1) }
        return nil
    }

    /// "-6.50 dB", "+1.2 dB", "0.988281": a finite number within ±100 (a gain beyond that
    /// is not a tag any tool writes), the unit optional.
    static func number(_ text: String, unit: String?) -> Double? {
        var body = Substring(text).drop { $0 == " " }
        while body.last == " " { body = body.dropLast() }
        if let unit, body.uppercased().hasSuffix(unit) {
            body = body.dropLast(unit.count)
            while body.last == " " { body = body.dropLast() }
        }
        if body.first == "+" { body = body.dropFirst() }
        guard let number = Double(body), number.isFinite, abs(number) <= 100 else { return nil }
        return number
    }
}
