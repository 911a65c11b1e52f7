import Foundation
import IAPClient
import IAPSettings
import IAPStages
import RedisClient
import Testing

/// Secrets stay secret: a URL's password is masked wherever a setting is shown, outbound URLs are
/// https but to loopback or a named simulator host, secret files open to others are found, and a
/// webhook secret rotates with no gap.
@Suite struct SecretSettingsTests {
    @Test func aURLsPasswordIsMaskedWhereverASettingIsShown() {
        let cases = [
            "redis://app:s3cret@redis.internal:6379/2": "redis://app:***@redis.internal:6379/2",
            "redis://:s3cret@10.0.0.1": "redis://:***@10.0.0.1",
            "redis-sentinel://s3cret@a:26379,b/mymaster": "redis-sentinel://***@a:26379,b/mymaster",
            "redis://127.0.0.1:6379": "redis://127.0.0.1:6379",
            "https://hooks:s3cret@backend.example/iap": "https://hooks:***@backend.example/iap",
        ]
        for (given, shown) in cases { #expect(Setting.maskingPassword(in: given) == shown, "\(given)") }
        #expect(Settings.redisURL.shown("redis://app:s3cret@h") == "redis://app:***@h")
        #expect(Settings.webhookSecret.shown("0123456789abcdef-s3cret") == "(set, hidden)")
        #expect(Settings.prefix.shown("iap") == "iap")
        let configuration = RedisConfiguration(endpoint: .tcp(host: "redis.internal", port: 6379), username: "app", password: "s3cret")
        #expect(!"\(configuration)".contains("s3cret") && "\(configuration)".contains("redis.internal:6379"))
    }

    @Test func outboundURLsAreHTTPSButToLoopbackOrANamedHost() throws {
        func webhook(_ url: String, plain: String? = nil) throws -> String? {
            var environment = ["IAP_WEBHOOK_URL": url]
            environment["IAP_PLAIN_HTTP_HOSTS"] = plain
            return try PipelineConfiguration(environment: environment).webhook.url
        }
        #expect(try webhook("https://backend.example/iap") == "https://backend.example/iap")
        #expect(try webhook("http://127.0.0.1:9000/hook") == "http://127.0.0.1:9000/hook")
        #expect(try webhook("http://localhost:9000/hook") == "http://localhost:9000/hook")
        #expect(try webhook("http://apple-sim:9090/x", plain: "apple-sim") == "http://apple-sim:9090/x")
        do {
            _ = try webhook("http://user:s3cret@backend.example/iap")
            Issue.record("plain http to a public host was accepted")
        } catch let error as ConfigurationError {
            #expect(error.variable == "IAP_WEBHOOK_URL" && error.problem.contains("IAP_PLAIN_HTTP_HOSTS"), "\(error)")
            #expect(!error.problem.contains("s3cret"), "\(error)")
        }
        #expect(throws: ConfigurationError.self) {
            try PipelineConfiguration(environment: ["IAP_APPLE_PRODUCTION_URL": "http://buy.itunes.apple.com/verifyReceipt"])
        }
    }

    @Test func secretFilesOthersMayReadAreFound() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("secret-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("client-keys.json").path
        let key = directory.appendingPathComponent("AuthKey.p8").path
        for path in [keys, key] { _ = FileManager.default.createFile(atPath: path, contents: Data("{}".utf8)) }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keys)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        let configuration = try PipelineConfiguration(environment: ["IAP_CLIENT_KEYS_FILE": keys, "IAP_OFFER_PRIVATE_KEY_FILE": key, "IAP_OFFER_KEY_ID": "OFFERKEY01"])
        #expect(configuration.exposedSecretFiles().map(\.variable) == ["IAP_CLIENT_KEYS_FILE"])
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: key)
        #expect(configuration.exposedSecretFiles().map(\.variable) == ["IAP_CLIENT_KEYS_FILE", "IAP_OFFER_PRIVATE_KEY_FILE"])
    }

    /// During a rotation each delivery carries two `v1=`: a receiver with the new secret and one
    /// still on the old accept it; one with neither does not.
    @Test func aWebhookSecretRotatesWithNoGap() throws {
        let old = "old-secret-0123456789", new = "new-secret-0123456789"
        let body = Array(#"{"event":"granted"}"#.utf8)
        let configuration = try PipelineConfiguration(environment: [
            "IAP_WEBHOOK_URL": "https://backend.example/iap", "IAP_WEBHOOK_SECRET": new, "IAP_WEBHOOK_PREVIOUS_SECRET": old,
        ])
        let header = try configuration.webhook.required()[0].signer.signature(body: body, timestamp: 1_800_000_000)
        #expect(header.components(separatedBy: ",v1=").count == 3, "\(header)")
        #expect(WebhookVerifier(secret: new).isValid(header: header, body: body, nowSeconds: 1_800_000_000))
        #expect(WebhookVerifier(secret: old).isValid(header: header, body: body, nowSeconds: 1_800_000_000))
        #expect(!WebhookVerifier(secret: "third-secret-0123456789").isValid(header: header, body: body, nowSeconds: 1_800_000_000))
        // Without a previous secret: one signature, as before.
        #expect(WebhookSigner(secret: new).signature(body: body, timestamp: 1).components(separatedBy: "v1=").count == 2)
        #expect(throws: ConfigurationError.self) {
            try PipelineConfiguration(environment: ["IAP_WEBHOOK_PREVIOUS_SECRET": "short"])
        }
    }

    /// `iapctl settings`, the executable: the password of `IAP_REDIS_URL` never printed.
    @Test func iapctlSettingsNeverPrintsARedisPassword() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("iapctl")
        process.arguments = ["settings"]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IAP_") }
            .merging(["IAP_REDIS_URL": "redis://app:s3cret-pass@127.0.0.1:1/0", "IAP_WEBHOOK_SECRET": "webhook-s3cret-0123456789"]) { _, new in new }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(text.contains("IAP_REDIS_URL=redis://app:***@127.0.0.1:1/0"), "\(text)")
        #expect(!text.contains("s3cret"), "\(text)")
    }
}
