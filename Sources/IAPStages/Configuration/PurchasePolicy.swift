import Foundation
import IAPSettings
import AppleReceipt
import PipelineCore

/// The operator's rules a verified purchase must pass before it is granted (the seeds' fraud
/// rules). The dedupe stage applies those it can decide alone (sandbox, currency) and hands the
/// counted ones to the grant script with the purchase (daily caps, refund limit), which counts
/// them in the step that would grant it, so no race lets one more through.
package struct PurchasePolicy: Sendable, Equatable {
    /// Sandbox purchases in this deployment (`IAP_SANDBOX`).
    package enum Sandbox: Sendable, Equatable {
        case allow
        case deny
        /// Only these users' (App Review, TestFlight testers): others are rejected.
        case users(Set<String>)
    }

    /// ISO 4217 codes a purchase may be paid in (`IAP_CURRENCIES`); `nil`: any.
    package var currencies: Set<String>?
    package var sandbox: Sandbox
    /// Refunds and revocations after which a user's new purchases are held (`IAP_MAX_REFUNDS_PER_USER`); `nil`: never.
    package var maxRefundsPerUser: Int?
    /// Users who may buy on one Apple Account (`IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT`); `nil`: any number.
    package var maxAccountsPerAppleAccount: Int?
    /// `IAP_SHARING_POLICY`.
    package var sharing: SharingPolicy

    package init(
        currencies: Set<String>? = nil, sandbox: Sandbox = .allow, maxRefundsPerUser: Int? = nil,
        maxAccountsPerAppleAccount: Int? = nil, sharing: SharingPolicy = .bind
    ) {
        self.currencies = currencies
        self.sandbox = sandbox
        self.maxRefundsPerUser = maxRefundsPerUser
        self.maxAccountsPerAppleAccount = maxAccountsPerAppleAccount
        self.sharing = sharing
    }

    /// Grants whatever Apple verified.
    package static let open = PurchasePolicy()

    /// Whether `user` may be granted a purchase from Apple's `environment` (`Sandbox`, `Production`…).
    package func allows(environment: String, user: String) -> Bool {
        guard environment.caseInsensitiveCompare("Sandbox") == .orderedSame else { return true }
        switch sandbox {
        case .allow: return true
        case .deny: return false
        case .users(let users): return users.contains(user)
        }
    }

    /// Why a purchase paid in `currency` (nil: unknown) must be held, or `nil` when it may be granted.
    package func holdReason(currency: String?) -> String? {
        guard let currencies else { return nil }
        guard let currency else { return ReasonCode.currencyUnknown }
        return currencies.contains(currency.uppercased()) ? nil : ReasonCode.currencyNotAllowed
    }

    /// Whether `text` is shaped like an ISO 4217 code: three ASCII letters, upper case.
    package static func isCurrencyCode(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == 3 && bytes.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }
}

/// The purchase policy's settings as given, each checked when read (every process reads them at
/// start); the sandbox's file of users is read when the policy is made (`policy()`: the deduper).
package struct PurchasePolicySettings: Sendable, Equatable {
    /// `IAP_CURRENCIES`: ISO 4217 codes, upper-cased; empty: any.
    package var currencies: [String]
    /// `IAP_SANDBOX`: `allow`, `deny`, or the path of a file of user ids allowed to use the sandbox.
    package var sandbox: String
    /// `IAP_MAX_REFUNDS_PER_USER`; 0: no limit.
    package var maxRefundsPerUser: Int
    /// `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT`; 0: no limit.
    package var maxAccountsPerAppleAccount: Int
    /// `IAP_SHARING_POLICY`.
    package var sharing: SharingPolicy

    package init(reading source: SettingSource) throws(ConfigurationError) {
        currencies = source.list(Settings.currencies).map { $0.uppercased() }
        if let bad = currencies.first(where: { !PurchasePolicy.isCurrencyCode($0) }) {
            throw ConfigurationError(Settings.currencies.variable, "'\(bad)' is not an ISO 4217 currency code (three letters, like USD)")
        }
        sandbox = source.text(Settings.sandbox)!
        maxRefundsPerUser = try source.count(Settings.maxRefundsPerUser)
        maxAccountsPerAppleAccount = try source.count(Settings.maxAccountsPerAppleAccount)
        sharing = SharingPolicy(rawValue: try source.choice(Settings.sharingPolicy))!
    }

    /// The policy: a limit of 0 is none, no currencies any; `IAP_SANDBOX`'s file read now.
    package func policy() throws(ConfigurationError) -> PurchasePolicy {
        PurchasePolicy(
            currencies: currencies.isEmpty ? nil : Set(currencies), sandbox: try sandboxPolicy(),
            maxRefundsPerUser: maxRefundsPerUser == 0 ? nil : maxRefundsPerUser,
            maxAccountsPerAppleAccount: maxAccountsPerAppleAccount == 0 ? nil : maxAccountsPerAppleAccount, sharing: sharing)
    }

    /// `allow`, `deny`, or the users of the file (one a line, `#` comments).
    private func sandboxPolicy() throws(ConfigurationError) -> PurchasePolicy.Sandbox {
        switch sandbox.lowercased() {
        case "allow": return .allow
        case "deny": return .deny
        default:
            guard let data = FileManager.default.contents(atPath: sandbox) else {
                throw ConfigurationError("IAP_SANDBOX", "must be allow, deny or a readable file of user ids; cannot read \(sandbox)")
            }
            let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            let users = lines.map { line in String(line.prefix { $0 != "#" }).trimmingCharacters(in: .whitespaces) }
            return .users(Set(users.filter { !$0.isEmpty }))
        }
    }
}
