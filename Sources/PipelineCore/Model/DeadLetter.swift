import Foundation

/// An entry of `iap:dead`: the job exactly as it was, and why it died.
public struct DeadLetter: Codable, Sendable, Equatable {
    /// The job payload; may be anything when the job could not be decoded (poison).
    public var job: String
    public var stage: String
    public var reason: String
    public var error: String?
    public var attempts: Int
    /// When it died (ms since 1970).
    public var at: Int64
    public var ticket: String?

    public init(job: String, stage: String, reason: String, error: String?, attempts: Int, at: Int64, ticket: String?) {
        self.job = job
        self.stage = stage
        self.reason = reason
        self.error = error
        self.attempts = attempts
        self.at = at
        self.ticket = ticket
    }

    public func encoded() -> String {
        String(decoding: canonicalJSON(self), as: UTF8.self)
    }

    public static func decode(_ entry: String) throws -> DeadLetter {
        try JSONDecoder().decode(DeadLetter.self, from: Data(entry.utf8))
    }
}
