import Foundation
import PipelineCore

/// A grant for a time as asked for (by the game's backend, an operator, the console), checked
/// before anything is stored: an id, an entitlement some product of the catalog gives, an end
/// after now and at most a year away (`until`, or `duration` from now), a reason.
package struct TimedGrantOrder: Sendable, Equatable {
    package var grantID: String
    package var entitlement: String
    package var until: Int64?
    package var duration: Duration?
    package var reason: String

    package init(grantID: String, entitlement: String, until: Int64? = nil, duration: Duration? = nil, reason: String) {
        self.grantID = grantID
        self.entitlement = entitlement
        self.until = until
        self.duration = duration
        self.reason = reason
    }

    /// Why an order is refused: a machine-readable code and a message (a `400`).
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        package var code: String
        package var message: String
        package var description: String { "\(code): \(message)" }
    }

    /// The grant it makes at `now` by `source`/`by`, or why not.
    package func grant(catalog: ProductCatalog, source: String, by: String, now: Int64) throws(Refusal) -> TimedGrant {
        guard Self.isName(grantID, longest: 64) else {
            throw Refusal(code: "invalid_grant_id", message: "grant_id must be 1 to 64 printable ASCII characters")
        }
        let known = Set(catalog.entitlements.values.joined())
        guard known.contains(entitlement) else {
            throw Refusal(
                code: "unknown_entitlement",
                message: "no product of the catalog gives \(entitlement.prefix(64)) (\(known.sorted().prefix(20).joined(separator: ", ")))")
        }
        guard !reason.isEmpty, reason.utf8.count <= 200, !reason.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Refusal(code: "invalid_reason", message: "reason must be 1 to 200 bytes of text without control characters")
        }
        let end: Int64
        switch (until, duration) {
        case (.some(let at), nil): end = at
        case (nil, .some(let length)): end = now + length.components.seconds * 1000
        default: throw Refusal(code: "invalid_until", message: "give until or duration_s, one of them")
        }
        guard end > now else { throw Refusal(code: "invalid_until", message: "the grant must end after now") }
        guard end - now <= TimedGrant.longest.components.seconds * 1000 else {
            throw Refusal(code: "invalid_until", message: "a grant lasts at most a year")
        }
        return TimedGrant(grantID: grantID, entitlement: entitlement, until: end, reason: reason, source: source, by: by, grantedAt: now)
    }

    /// 1 to `longest` printable ASCII characters (no space).
    package static func isName(_ text: String, longest: Int) -> Bool {
        (1...longest).contains(text.utf8.count) && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
