import AppleReceipt
import IAPMetrics
import Metrics
import PipelineCore

/// The business's counters for dashboards, per process and without user labels (a product and a
/// currency are the catalog's): what each grant, refund and expiry this process made. Prometheus
/// sums them over the fleet; the exact figures, kept for ever, are the reports'
/// (docs/reports.md).
package enum SalesMetrics {
    /// The sales of a grant step that moved: each purchase granted (not adopted, not a family
    /// member's access) counts in `iap_purchases_total{product}`, its price x quantity in
    /// `iap_sales_milliunits_total{currency,product}` where Apple said one, a subscription's first
    /// period in `iap_subscriptions_started_total{product}`. A part's job run again after its
    /// worker died between its steps reports its grant again, and counts again: dashboards, not
    /// the books (the reports').
    package static func count(_ outcome: GrantOutcome, purchases: [Purchase]) {
        // The ticket's status says whether anything was granted: the outcome's transactions are
        // read (a parse of their JSON) only for a receipt of several purchases.
        guard outcome.status == .granted || (outcome.status == .held && purchases.count > 1) else { return }
        let granted: Set<String> = purchases.count == 1 ? [purchases[0].transactionID] : outcome.grantedTransactions
        for purchase in purchases where granted.contains(purchase.transactionID) && purchase.adopt != true {
            guard purchase.transaction?.isFamilyShared != true else { continue }
            let product = purchase.productID
            Self.purchasesCounted[product].increment()
            if let transaction = purchase.transaction, let price = transaction.price.flatMap({ Int64($0) }), let currency = transaction.currency {
                Self.sales[CurrencyProduct(currency: currency, product: product)].increment(by: price * Int64(purchase.quantity))
            }
            if purchase.kind == "auto_renewable", purchase.transactionID == purchase.originalTransactionID {
                Self.subscriptionsStarted[product].increment()
            }
        }
    }

    private struct CurrencyProduct: Hashable, Sendable {
        let currency: String
        let product: String
    }

    // What a grant counts, made once per product (and currency): `MetricHandles`.
    private static let purchasesCounted = MetricHandles<String, Counter> { Counter(label: "iap_purchases_total", dimensions: [("product", $0)]) }
    private static let sales = MetricHandles<CurrencyProduct, Counter> { key in
        Counter(label: "iap_sales_milliunits_total", dimensions: [("currency", key.currency), ("product", key.product)])
    }
    private static let subscriptionsStarted = MetricHandles<String, Counter> {
        Counter(label: "iap_subscriptions_started_total", dimensions: [("product", $0)])
    }

    /// A refund Apple made that this process took back (`revoked`, `partially_revoked`):
    /// `iap_refunds_total{product}`.
    package static func countRefund(product: String) {
        Counter(label: "iap_refunds_total", dimensions: [("product", product)]).increment()
    }

    /// A subscription that expired by a notification this process applied:
    /// `iap_subscriptions_expired_total{reason}` (`unknown` when Apple said none).
    package static func countExpiry(reason: String?) {
        Counter(label: "iap_subscriptions_expired_total", dimensions: [("reason", reason ?? "unknown")]).increment()
    }
}
