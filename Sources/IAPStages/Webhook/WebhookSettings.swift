import IAPSettings

/// Where `iap-webhook` delivers the fulfilment events and how (`IAP_WEBHOOK_*`): the URL, the
/// shared signing secret and the one being retired, how long an event is retried, each POST's
/// timeout. Read by the component itself (`init(reading:)`).
package struct WebhookSettings: Sendable {
    package var url: String?
    package var secret: String?
    /// `IAP_WEBHOOK_PREVIOUS_SECRET`: the secret being retired, which signs a second `v1=`.
    package var previousSecret: String?
    package var maxAge: Duration
    package var timeout: Duration

    package init(reading source: SettingSource) throws(ConfigurationError) {
        url = try source.url(Settings.webhookURL)
        secret = try source.secret(Settings.webhookSecret, minBytes: 16)
        previousSecret = try source.secret(Settings.webhookPreviousSecret, minBytes: 16)
        maxAge = try source.duration(Settings.webhookMaxAge)
        timeout = try source.duration(Settings.webhookTimeout)
    }

    /// The URL and the secret, which `iap-webhook` cannot run without.
    package func required() throws(ConfigurationError) -> (url: String, secret: String) {
        guard let url else { throw ConfigurationError(Settings.webhookURL.variable, "required: where iap-webhook delivers the events") }
        guard let secret else {
            throw ConfigurationError(
                Settings.webhookSecret.variable, "required: the secret the deliveries are signed with (at least 16 bytes)")
        }
        return (url, secret)
    }

    /// The deliveries' signer: the secret, and the previous one during a rotation.
    package func signer() throws(ConfigurationError) -> WebhookSigner {
        WebhookSigner(secret: try required().secret, previousSecret: previousSecret)
    }
}
