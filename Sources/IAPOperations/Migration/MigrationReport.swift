import PipelineCore

/// What `iapctl migrate` copied and found, per key family.
package struct MigrationReport: Encodable, Sendable, Equatable {
    package struct Family: Encodable, Sendable, Equatable {
        package var name: String
        /// Keys (or members, entries, jobs) in the source.
        package var source: Int
        /// Written to the destination.
        package var moved: Int
        /// Found on the destination afterwards, as written.
        package var found: Int
        /// Values compared and found different (claims, grant records).
        package var different: Int
        package var note: String?

        package var verified: Bool { different == 0 && found == moved }
    }

    package var buckets: Int
    package var families: [Family] = []
    /// Notification tickets renamed to name their purchase's bucket.
    package var renamedTickets = 0
    /// Keys of families the migration does not know (left in the source, named in the output).
    package var unknownKeys = 0
    /// The first 20 of them.
    package var unknownNames: [String] = []
    /// Transient keys left (rate windows, the reaper lock, workers, API permits).
    package var skippedKeys = 0

    package init(buckets: Int) { self.buckets = buckets }

    package var verified: Bool { families.allSatisfy(\.verified) && unknownKeys == 0 }

    mutating func add(_ name: String, source: Int, moved: Int, found: Int? = nil, note: String? = nil) {
        families.append(Family(name: name, source: source, moved: moved, found: found ?? moved, different: 0, note: note))
    }

    mutating func update(_ name: String, _ change: (inout Family) -> Void) {
        if let index = families.firstIndex(where: { $0.name == name }) { change(&families[index]) }
    }

    enum CodingKeys: String, CodingKey {
        case buckets, families, verified
        case renamedTickets = "renamed_tickets"
        case unknownKeys = "unknown_keys"
        case unknownNames = "unknown_names"
        case skippedKeys = "skipped_keys"
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(buckets, forKey: .buckets)
        try container.encode(families, forKey: .families)
        try container.encode(verified, forKey: .verified)
        try container.encode(renamedTickets, forKey: .renamedTickets)
        try container.encode(unknownKeys, forKey: .unknownKeys)
        try container.encode(unknownNames, forKey: .unknownNames)
        try container.encode(skippedKeys, forKey: .skippedKeys)
    }
}
