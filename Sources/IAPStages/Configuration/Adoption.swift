import AppleReceipt
import Foundation
import IAPSettings
import PipelineCore

/// When each app moved onto the pipeline (its cutover, `adopted_at` in `IAP_APPS_FILE` or
/// `IAP_ADOPTED_AT`) and what a purchase made before it gets (`IAP_PRE_ADOPTION`): a studio that
/// already sold granted those through its old system, and granting them again is paying twice.
///
/// A purchase is **pre-adoption** when it was made before its app's cutover: a consumable's or a
/// subscription period's own purchase date, a non-consumable's original purchase date (a restore
/// makes a new transaction of an old purchase). The dedupe stage marks it so; the grant stage
/// still grants nothing the books know (a claim taken is `duplicate` as ever). A subscription
/// period bought after the cutover is an ordinary one, whenever the subscription began.
package struct Adoption: Sendable, Equatable {
    /// What a pre-adoption purchase the books do not know gets.
    package enum Treatment: String, Sendable, CaseIterable {
        /// Claimed and owned as a grant would, entitlements and all, but its event is `adopted`, not `granted`.
        case record
        /// Held for an operator, reason `pre_adoption`.
        case hold
        /// Granted as any purchase (an old system that kept nothing).
        case grant
    }

    /// `IAP_ADOPTED_AT` (ms): the cutover of the single app, and of every app of `IAP_APPS_FILE` without its own.
    package var cutover: Int64?
    /// `adopted_at` of each app of `IAP_APPS_FILE` that has one (ms), by bundle id.
    package var cutovers: [String: Int64]
    /// `IAP_PRE_ADOPTION`.
    package var treatment: Treatment

    package init(cutover: Int64? = nil, cutovers: [String: Int64] = [:], treatment: Treatment = .record) {
        self.cutover = cutover
        self.cutovers = cutovers
        self.treatment = treatment
    }

    /// No cutover: every purchase is granted as it always was.
    package static let none = Adoption()

    /// Reads `IAP_ADOPTED_AT` and `IAP_PRE_ADOPTION` beside the apps' own `adopted_at` (checked when
    /// the apps file was read). A cutover in the future is refused: every purchase made until then
    /// would be taken for one the old system granted.
    package init(reading source: SettingSource, apps: AppsFile?, now: Date = Date()) throws(ConfigurationError) {
        let variable = Settings.adoptedAt.variable
        var cutover: Int64?
        if let text = source.given(Settings.adoptedAt) {
            guard let at = Self.parse(text) else {
                throw ConfigurationError(variable, "'\(text.prefix(64))' is not an ISO 8601 time (like 2026-11-01T00:00:00Z)")
            }
            guard at <= Self.milliseconds(now) else {
                throw ConfigurationError(variable, "is in the future: every purchase made until then would be taken for one already granted")
            }
            cutover = at
        }
        let treatment = Treatment(rawValue: try source.choice(Settings.preAdoption))!
        self.init(cutover: cutover, cutovers: (apps?.apps ?? []).reduce(into: [:]) { $0[$1.bundleID] = $1.adoptedAt }, treatment: treatment)
    }

    /// The cutover of the app `bundleID` (its own, else the single app's); `nil`: none.
    package func cutover(ofApp bundleID: String?) -> Int64? { bundleID.flatMap { cutovers[$0] } ?? cutover }

    /// What `transaction` of a product of `type`, bought in app `bundleID`, gets for being made
    /// before the cutover; `nil` when it was not (or no cutover is set, or Apple gave no date).
    package func preAdoption(_ transaction: InAppTransaction, type: ProductCatalog.ProductType, app bundleID: String?) -> Treatment? {
        guard let cutover = cutover(ofApp: bundleID) else { return nil }
        let date = type == .nonConsumable ? transaction.originalPurchaseDateMs ?? transaction.purchaseDateMs : transaction.purchaseDateMs
        guard let ms = date.flatMap({ Int64($0) }), ms < cutover else { return nil }
        return treatment
    }

    /// An ISO 8601 time with its zone (`2026-11-01T00:00:00Z`, `…T08:00:00+08:00`, fractions of a
    /// second allowed), in ms since 1970; `nil`: not one.
    package static func parse(_ text: String) -> Int64? {
        let plain = Date.ISO8601FormatStyle()
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        guard let date = (try? plain.parse(text)) ?? (try? fractional.parse(text)) else { return nil }
        return milliseconds(date)
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}
