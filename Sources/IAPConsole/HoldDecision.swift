import HTTPTypes
import IAPOperations
import PipelineCore

/// An operator's decision on a held purchase, posted from the held page with a required note.
enum HoldDecision: String, Sendable {
    case release
    case reject

    /// Who may decide: an operator (and an admin).
    static let role = ConsoleRole.operator

    /// The decision, made in the operator's name (from the session, never from the form).
    func make(on store: PipelineStore, unit: String, by user: ConsoleUser, note: String) async throws -> HeldPurchaseResult {
        switch self {
        case .release: try await store.releaseHeld(unit: unit, by: user.name, note: note)
        case .reject: try await store.rejectHeld(unit: unit, by: user.name, note: note)
        }
    }

    /// The result in a word or two, for the audit.
    static func outcome(_ result: HeldPurchaseResult) -> String {
        switch result {
        case .decided(let outcome): outcome
        case .alreadyDecided(let outcome): "\(outcome) before: nothing changed"
        case .notFound: "not held"
        }
    }

    /// What the operator is told.
    static func said(_ result: HeldPurchaseResult, unit: String) -> (status: HTTPResponse.Status, text: String) {
        switch result {
        case .decided("released"): (.ok, "Released: \(unit) is granted, once.")
        case .decided(let outcome): (.ok, "Rejected: \(unit) is \(outcome) and will never be granted.")
        case .alreadyDecided(let outcome): (.conflict, "Nothing changed: \(unit) was \(outcome) before.")
        case .notFound: (.notFound, "No purchase is held under \(unit).")
        }
    }
}
