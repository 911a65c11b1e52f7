import Foundation
import PipelineCore

/// An entitlement given to a user until a moment, not bought (`grant_for_a_time`): support's
/// "VIP for 7 days", a live-ops promotion. Idempotent by `grantID` for the user.
package struct TimedGrant: Codable, Sendable, Equatable {
    package var grantID: String
    package var entitlement: String
    /// Ms since 1970: the entitlement ends then (`entitlement_ended`, `ended_by` `expired`).
    package var until: Int64
    package var reason: String
    /// `api` (the game's backend), `operator` (`iapctl`), `console`.
    package var source: String
    /// Who gave it: the client key, the operator or the console user ('' when unknown).
    package var by: String
    package var grantedAt: Int64
    /// `active` or `ended`.
    package var status: String
    package var endedAt: Int64?
    /// `expired` (its end came) or `revoked` (taken back before).
    package var endedBy: String?

    package init(
        grantID: String, entitlement: String, until: Int64, reason: String, source: String, by: String, grantedAt: Int64,
        status: String = "active", endedAt: Int64? = nil, endedBy: String? = nil
    ) {
        self.grantID = grantID
        self.entitlement = entitlement
        self.until = until
        self.reason = reason
        self.source = source
        self.by = by
        self.grantedAt = grantedAt
        self.status = status
        self.endedAt = endedAt
        self.endedBy = endedBy
    }

    /// Whether it gives its entitlement at `now` (until its end, whatever the sweep has done yet).
    package func isActive(at now: Int64) -> Bool { status == "active" && until > now }

    /// The longest a grant may last: a year.
    package static let longest: Duration = .seconds(365 * 86_400)

    enum CodingKeys: String, CodingKey {
        case entitlement, until, reason, source, by, status
        case grantID = "grant_id"
        case grantedAt = "granted_at"
        case endedAt = "ended_at"
        case endedBy = "ended_by"
    }

    /// The record as the scripts keep it (numbers as strings).
    package init(record: String) throws {
        struct Stored: Decodable {
            var grant_id: String
            var entitlement: String
            var until: String
            var reason: String
            var source: String
            var by: String
            var granted_at: String
            var status: String
            var ended_at: String?
            var ended_by: String?
        }
        let stored = try JSONDecoder().decode(Stored.self, from: Data(record.utf8))
        self.init(
            grantID: stored.grant_id, entitlement: stored.entitlement, until: Int64(stored.until) ?? 0, reason: stored.reason,
            source: stored.source, by: stored.by, grantedAt: Int64(stored.granted_at) ?? 0, status: stored.status,
            endedAt: stored.ended_at.flatMap { Int64($0) }, endedBy: stored.ended_by)
    }

    /// What the API answers: times in ISO 8601.
    package var json: [String: Any] {
        var fields: [String: Any] = [
            "grant_id": grantID, "entitlement": entitlement, "until": Ticket.iso8601(milliseconds: until), "reason": reason,
            "source": source, "granted_at": Ticket.iso8601(milliseconds: grantedAt), "status": status,
        ]
        if !by.isEmpty { fields["by"] = by }
        if let endedAt { fields["ended_at"] = Ticket.iso8601(milliseconds: endedAt) }
        if let endedBy { fields["ended_by"] = endedBy }
        return fields
    }
}
