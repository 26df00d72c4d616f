extension SavedState {
    /// The playback rate, its pitch algorithm and skip silence, as `status` shows them
    /// (`rate: 1.5`, `pitchalgorithm: timeDomain`, `skipsilence: 1`).
    public struct Pace: Codable, Equatable, Sendable {
        /// The rates a state may hold: the player's (`QueuePlayer.supportedRates`).
        public static let rates: ClosedRange<Double> = 0.5...3.0
        /// The pitch algorithms' names (`AudioTimePitchAlgorithm`'s cases).
        public static let pitchAlgorithms = ["timeDomain", "varispeed"]

        /// The daemon's rate (not a feed's), from 0.5 to 3.0.
        public var rate: Double
        /// `timeDomain` or `varispeed`.
        public var pitchAlgorithm: String
        public var skipsSilence: Bool

        public init(rate: Double = 1, pitchAlgorithm: String = "timeDomain", skipsSilence: Bool = false) {
            self.rate = rate
            self.pitchAlgorithm = pitchAlgorithm
            self.skipsSilence = skipsSilence
        }

        /// Why this cannot be restored; nil when it can.
        var problem: String? {
            guard rate.isFinite, Self.rates.contains(rate), Self.pitchAlgorithms.contains(pitchAlgorithm) else {
                return "its rate \(rate) or pitch algorithm \(pitchAlgorithm) is not the player's"
            }
            return nil
        }
    }
}
