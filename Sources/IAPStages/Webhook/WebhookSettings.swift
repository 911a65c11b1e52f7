import IAPSettings
import PipelineCore

/// Where `iap-webhook` delivers the fulfilment events and how (`IAP_WEBHOOK_*`,
/// `IAP_WEBHOOKS_FILE`): the destinations (the one of `IAP_WEBHOOK_URL` and its secret is named
/// `default`), how long an event is retried, each POST's timeout. Read by the component itself
/// (`init(reading:)`).
package struct WebhookSettings: Sendable {
    package var url: String?
    package var secret: String?
    /// `IAP_WEBHOOK_PREVIOUS_SECRET`: the secret being retired, which signs a second `v1=`.
    package var previousSecret: String?
    /// `IAP_WEBHOOKS_FILE`'s destinations, by name.
    package var fileDestinations: [WebhookDestination]
    package var maxAge: Duration
    package var timeout: Duration

    package init(reading source: SettingSource) throws(ConfigurationError) {
        url = try source.url(Settings.webhookURL)
        secret = try source.secret(Settings.webhookSecret, minBytes: 16)
        previousSecret = try source.secret(Settings.webhookPreviousSecret, minBytes: 16)
        maxAge = try source.duration(Settings.webhookMaxAge)
        timeout = try source.duration(Settings.webhookTimeout)
        fileDestinations = []
        if let path = source.given(Settings.webhooksFile) {
            fileDestinations = try WebhooksFile.destinations(file: path, source: source)
        }
        if url != nil, fileDestinations.contains(where: { $0.name == RedisKeys.defaultWebhookDestination }) {
            throw ConfigurationError(
                Settings.webhooksFile.variable, "names the destination default, which IAP_WEBHOOK_URL is: set one of them")
        }
    }

    /// Every destination, `default` (`IAP_WEBHOOK_URL`) first; `iap-webhook` cannot run without one.
    package func required() throws(ConfigurationError) -> [WebhookDestination] {
        var destinations: [WebhookDestination] = []
        if let url {
            guard let secret else {
                throw ConfigurationError(
                    Settings.webhookSecret.variable, "required: the secret the deliveries are signed with (at least 16 bytes)")
            }
            destinations.append(WebhookDestination(
                name: RedisKeys.defaultWebhookDestination, url: url, secret: secret, previousSecret: previousSecret))
        }
        destinations += fileDestinations
        guard !destinations.isEmpty else {
            throw ConfigurationError(Settings.webhookURL.variable, "required (or IAP_WEBHOOKS_FILE): where iap-webhook delivers the events")
        }
        return destinations
    }
}
