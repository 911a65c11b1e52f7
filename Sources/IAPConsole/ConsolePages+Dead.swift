import PipelineCore

/// The dead-letter pages: a window of a bucket's list, and a group of it previewed before a
/// replay or purge. Neither shows an entry's job (the evidence).
extension ConsolePages {
    /// One window of a bucket's dead letters, newest first: counted by stage and reason (each
    /// group with its preview link), each entry's stage, reason, error, attempts, time and ticket.
    func dead(bucket: Int, start: Int) async throws -> [String: Any] {
        let buckets = store.keys.everyBucket.count
        let bucket = min(max(bucket, 0), buckets - 1)
        let window = DeadLetterWindow.size
        let (total, entries) = try await DeadLetterWindow(store: store).read(bucket: bucket, start: start)
        var groups: [DeadLetterGroup: Int] = [:]
        for case let letter? in entries.map(\.letter) { groups[DeadLetterGroup(letter), default: 0] += 1 }
        return Self.present([
            "title": "Dead letters", "total": total, "from": total == 0 ? 0 : start + 1, "to": start + entries.count,
            "letters": entries.map(Self.row), "hasLetters": !entries.isEmpty,
            "groups": groups.sorted { ($1.value, $0.key.name) < ($0.value, $1.key.name) }.map { group, count in
                ["group": group.name, "count": count, "previewHref": ConsolePaths.deadPreview(bucket: bucket, start: start, group: group)]
            },
            "olderHref": start + entries.count < total ? ConsolePaths.dead(bucket: bucket, start: start + window) : nil,
            "newerHref": start > 0 ? ConsolePaths.dead(bucket: bucket, start: max(start - window, 0)) : nil,
            "buckets": buckets > 1 ? (0..<buckets).map { ["href": ConsolePaths.dead(bucket: $0, start: 0), "name": "bucket \($0)"] } : nil,
            "iapctl": "iapctl dead list --limit \(window)",
        ])
    }

    /// A dry run: the entries of one group in one window, each named by its digest in the forms
    /// that replay (an operator) or purge (an admin) exactly these and no others.
    func deadPreview(bucket: Int, start: Int, group: DeadLetterGroup, role: ConsoleRole) async throws -> [String: Any] {
        let (total, entries) = try await DeadLetterWindow(store: store).read(bucket: bucket, start: start)
        let chosen = entries.filter { $0.letter.map(DeadLetterGroup.init) == group }
        let rows: [[String: Any]] = chosen.map { entry in
            var row = Self.row(entry)
            row["digest"] = entry.digest
            return row
        }
        let tickets = chosen.compactMap { $0.letter?.ticket }
        return Self.present([
            "title": "Dead letters: \(group.name)", "group": group.name, "bucket": bucket, "start": start, "seen": total,
            "from": start + 1, "to": start + entries.count, "letters": rows, "count": rows.count, "hasLetters": !rows.isEmpty,
            "canReplay": role >= DeadLetterAction.replay.role && !rows.isEmpty,
            "canPurge": role >= DeadLetterAction.purge.role && !rows.isEmpty,
            "backHref": ConsolePaths.dead(bucket: bucket, start: start),
            "iapctl": tickets.isEmpty ? nil : "iapctl dead replay --dry-run " + tickets.map(ConsolePaths.shellQuoted).joined(separator: " "),
        ])
    }

    private static func row(_ entry: DeadLetterWindow.Entry) -> [String: Any] {
        guard let letter = entry.letter else { return ["stage": "?", "reason": "undecodable entry", "error": "", "attempts": "", "at": ""] }
        return present([
            "stage": letter.stage, "reason": letter.reason, "error": String((letter.error ?? "").prefix(300)),
            "attempts": letter.attempts, "at": time(ms: letter.at), "ticket": letter.ticket, "ticketHref": letter.ticket.map(ConsolePaths.ticket),
        ])
    }
}

/// Dead letters alike: the stage they died at and why.
struct DeadLetterGroup: Hashable, Sendable {
    let stage: String
    let reason: String

    init(stage: String, reason: String) {
        self.stage = stage
        self.reason = reason
    }

    init(_ letter: DeadLetter) {
        self.init(stage: letter.stage, reason: letter.reason)
    }

    var name: String { "\(stage) · \(reason)" }
}
