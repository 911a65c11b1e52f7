import IAPClient

/// Signs a webhook delivery (`X-IAP-Signature: t=<unix s>,v1=<hex>`), Stripe's scheme: the HMAC
/// covers the timestamp and the raw body, so neither can be altered or replayed later. While the
/// secret is being rotated (`IAP_WEBHOOK_PREVIOUS_SECRET`) a second `v1=` signed with the old one
/// follows, so receivers on either secret accept. The layout is `IAPClient.WebhookVerifier`'s,
/// which is also what a receiver checks with.
package struct WebhookSigner: Sendable {
    private let secrets: [String]

    package init(secret: String, previousSecret: String? = nil) {
        secrets = [secret] + (previousSecret.map { [$0] } ?? [])
    }

    package func signature(body: [UInt8], timestamp: Int64) -> String {
        WebhookVerifier.header(body: body, timestamp: timestamp, secrets: secrets)
    }
}
