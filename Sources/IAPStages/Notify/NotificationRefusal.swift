/// Why a notification is not admitted: it must never be stored, whoever hands it in. The intake
/// answers Apple with `status` and `code`; a backfill counts it as invalid.
package struct NotificationRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: String, Sendable {
        /// A signature (the notification's or one inside it) does not verify to a configured root.
        case invalidSignature = "invalid_signature"
        /// A member, or what is signed inside it, names a bundle id not in `IAP_BUNDLE_IDS`, or none.
        case bundleMismatch = "bundle_mismatch"
        /// A production member's `appAppleId` is not `IAP_APPLE_APP_ID`.
        case appAppleIDMismatch = "app_apple_id_mismatch"
        /// A member's environment is not that of what it carries.
        case environmentMismatch = "environment_mismatch"
        /// None of `data`, `summary`, `appData`, `externalPurchaseToken`: about no app at all.
        case noAppMember = "no_app_member"
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// 401 for a signature, 400 for the rest.
    package var httpStatus: Int { code == .invalidSignature ? 401 : 400 }

    package var description: String { "\(code.rawValue): \(message)" }
}
