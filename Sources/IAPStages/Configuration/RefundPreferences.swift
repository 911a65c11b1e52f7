import IAPSettings
import AppStoreServerAPI
import Foundation

/// `IAP_REFUND_PREFERENCE`: the refund preference the notifier sends with its answer to Apple's
/// `CONSUMPTION_REQUEST`, per the request's `consumptionRequestReason`. One value for every reason
/// (`decline`), or a map (`UNINTENDED_PURCHASE=grant_full,FULFILLMENT_ISSUE=grant_full,default=decline`);
/// a reason the map does not name takes `default`. `none` as the single value: consumption
/// requests are not answered; `none` in a map (or a reason without `default`): answered with the
/// facts and no preference.
package struct RefundPreferences: Sendable, Equatable {
    /// The reasons Apple gives (`consumptionRequestReason`).
    package static let reasons = ["UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER"]
    /// The words a preference is written with.
    package static let choices = ["none", "decline", "grant_full", "grant_prorated"]

    /// By reason; a reason not here takes `fallback`.
    package var byReason: [String: ConsumptionInformation.RefundPreference?]
    package var fallback: ConsumptionInformation.RefundPreference?

    package init(byReason: [String: ConsumptionInformation.RefundPreference?] = [:], fallback: ConsumptionInformation.RefundPreference?) {
        self.byReason = byReason
        self.fallback = fallback
    }

    /// The preference to send for a request of `reason` (Apple's word; absent on older requests).
    package func preference(for reason: String?) -> ConsumptionInformation.RefundPreference? {
        reason.flatMap { byReason[$0] } ?? fallback
    }

    /// Reads the setting's text: `nil` when consumption requests are not answered (`none`).
    /// Its setting (`IAP_REFUND_PREFERENCE`); `nil` for `none`.
    package static func reading(_ source: SettingSource) throws(ConfigurationError) -> RefundPreferences? {
        switch parse(source.text(Settings.refundPreference) ?? "none") {
        case .success(let preferences): return preferences
        case .failure(let error): throw ConfigurationError(Settings.refundPreference.variable, error.description)
        }
    }

    package static func parse(_ text: String) -> Result<RefundPreferences?, ParseError> {
        func choice(_ word: String) -> ConsumptionInformation.RefundPreference?? {
            let lowered = word.lowercased()
            guard choices.contains(lowered) else { return nil }
            return .some(lowered == "none" ? nil : ConsumptionInformation.RefundPreference(rawValue: lowered.uppercased()))
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.contains("=") else {
            guard let single = choice(trimmed) else {
                return .failure(ParseError("'\(trimmed)' is none of \(choices.joined(separator: ", ")), nor a map REASON=choice,…"))
            }
            return .success(single.map { RefundPreferences(fallback: $0) })
        }
        var preferences = RefundPreferences(fallback: nil)
        var seen: Set<String> = []
        for entry in trimmed.split(separator: ",") {
            let pair = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { return .failure(ParseError("'\(entry)' is not REASON=choice")) }
            let reason = pair[0].uppercased()
            guard reason == "DEFAULT" || reasons.contains(reason) else {
                return .failure(ParseError("'\(pair[0])' is none of \(reasons.joined(separator: ", ")) or default"))
            }
            guard seen.insert(reason).inserted else { return .failure(ParseError("\(pair[0]) is given twice")) }
            guard let preference = choice(pair[1]) else {
                return .failure(ParseError("'\(pair[1])' (for \(pair[0])) is none of \(choices.joined(separator: ", "))"))
            }
            if reason == "DEFAULT" { preferences.fallback = preference } else { preferences.byReason[reason] = .some(preference) }
        }
        return .success(preferences)
    }

    package struct ParseError: Error, Equatable, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }
}
