import Foundation

/// An entry of `iap:dead`: the job exactly as it was, and why it died.
package struct DeadLetter: Codable, Sendable, Equatable {
    /// The job payload; may be anything when the job could not be decoded (poison).
    package var job: String
    package var stage: String
    package var reason: String
    package var error: String?
    package var attempts: Int
    /// When it died (ms since 1970).
    package var at: Int64
    package var ticket: String?

    package init(job: String, stage: String, reason: String, error: String?, attempts: Int, at: Int64, ticket: String?) {
        self.job = job
        self.stage = stage
        self.reason = reason
        self.error = error
        self.attempts = attempts
        self.at = at
        self.ticket = ticket
    }

    package func encoded() -> String {
        String(decoding: canonicalJSON(self), as: UTF8.self)
    }

    package static func decode(_ entry: String) throws -> DeadLetter {
        try JSONDecoder().decode(DeadLetter.self, from: Data(entry.utf8))
    }
}
