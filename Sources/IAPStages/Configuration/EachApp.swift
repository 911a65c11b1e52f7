/// One part per configured app (a Server API client, a history reader), from which a job takes
/// its app's once: the app its purchase or evidence is of; the first app's when it names none,
/// or one without a part of its own. What the part then does names no app.
package struct EachApp<Part: Sendable>: Sendable {
    package let parts: [(bundleID: String, part: Part)]

    package init(_ parts: [(bundleID: String, part: Part)]) {
        precondition(!parts.isEmpty, "at least one app's part")
        self.parts = parts
    }

    package func of(_ bundleID: String?) -> Part {
        parts.first { $0.bundleID == bundleID }?.part ?? parts[0].part
    }
}
