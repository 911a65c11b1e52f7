import AppleJWS

/// Why a subscription expired, in one word for the `expired` event: `voluntary` (the customer
/// cancelled), `billing_retry` (Apple could not bill them and stopped trying), `price_increase`
/// (no consent to a price increase), `product_not_for_sale`, `other`. From an `EXPIRED`
/// notification's subtype, else the renewal info's `expirationIntent` (1 to 5, in that order).
enum ExpirationReason {
    static func of(subtype: NotificationSubtype?, intent: Int?) -> String? {
        switch subtype {
        case .voluntary: return "voluntary"
        case .billingRetry: return "billing_retry"
        case .priceIncrease: return "price_increase"
        case .productNotForSale: return "product_not_for_sale"
        default: return of(intent: intent)
        }
    }

    static func of(intent: Int?) -> String? {
        switch intent {
        case 1: "voluntary"
        case 2: "billing_retry"
        case 3: "price_increase"
        case 4: "product_not_for_sale"
        case 5: "other"
        default: nil
        }
    }
}
