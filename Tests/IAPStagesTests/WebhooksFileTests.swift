import Foundation
import IAPSettings
import IAPStages
import PipelineCore
import Testing

/// `IAP_WEBHOOKS_FILE`: several destinations, each checked member by member when it is read.
struct WebhooksFileTests {
    static let secret = "0123456789abcdef0123"

    static func destinations(_ text: String, environment: [String: String] = [:]) throws -> [WebhookDestination] {
        try WebhooksFile.destinations(text: text, source: SettingSource(environment: environment))
    }

    @Test func aFileNamesEachDestinationWithItsURLSecretFiltersAndShare() throws {
        let secretFile = FileManager.default.temporaryDirectory.appendingPathComponent("hook-\(UUID().uuidString)")
        try Data("from-a-file-0123456789\n".utf8).write(to: secretFile)
        defer { try? FileManager.default.removeItem(at: secretFile) }
        let found = try Self.destinations("""
            {"game": {"url": "https://game.example/iap", "secret_file": "\(secretFile.path)", "environments": ["Production"]},
             "analytics": {"url": "http://127.0.0.1:9/a", "secret": "\(Self.secret)", "previous_secret": "older-secret-0123456",
                           "apps": ["com.acme.game"], "events": ["granted", "revoked"], "max_in_flight": 3}}
            """)
        #expect(found.map(\.name) == ["analytics", "game"])
        #expect(found[1].secret == "from-a-file-0123456789" && found[1].filter == WebhookFilter(environments: ["Production"]))
        #expect(found[0].filter == WebhookFilter(apps: ["com.acme.game"], events: ["granted", "revoked"]))
        #expect(found[0].previousSecret == "older-secret-0123456" && found[0].maxInFlight == 3)
        // Shares: its own, else an even part of the slots, never above the slots.
        #expect(WebhookDestination.shares(of: found, slots: 16) == ["analytics": 3, "game": 8])
        #expect(WebhookDestination.shares(of: found, slots: 2) == ["analytics": 2, "game": 1])
    }

    @Test(arguments: [
        (#"[]"#, "is not a JSON object keyed by destination name"),
        (#"{}"#, "names no destination"),
        (#"{"Game": {}}"#, "\"Game\" is not a destination name"),
        (#"{"a:b": {}}"#, "is not a destination name"),
        (#"{"g": {"url": "https://x.example", "secret": "0123456789abcdef", "colour": 1}}"#, "g: unknown member \"colour\""),
        (#"{"g": {"secret": "0123456789abcdef"}}"#, "g: url is required"),
        (#"{"g": {"url": "https://x.example"}}"#, "g: secret or secret_file is required"),
        (#"{"g": {"url": "https://x.example", "secret": "short"}}"#, "g: secret must be at least 16 bytes"),
        (#"{"g": {"url": "https://x.example", "secret": "0123456789abcdef", "secret_file": "/x"}}"#, "secret and secret_file: give one"),
        (#"{"g": {"url": "http://hooks.example/x", "secret": "0123456789abcdef"}}"#, "is plain http to hooks.example"),
        (#"{"g": {"url": "ftp://x.example", "secret": "0123456789abcdef"}}"#, "is not an http(s) URL"),
        (#"{"g": {"url": "https://x.example", "secret": "0123456789abcdef", "events": ["grantd"]}}"#, "events: \"grantd\" is no event"),
        (#"{"g": {"url": "https://x.example", "secret": "0123456789abcdef", "environments": ["production"]}}"#, "is not Production or Sandbox"),
        (#"{"g": {"url": "https://x.example", "secret": "0123456789abcdef", "apps": []}}"#, "apps must be a non-empty list of strings"),
        (#"{"g": {"url": "https://x.example", "secret": "0123456789abcdef", "max_in_flight": 0}}"#, "max_in_flight must be at least 1"),
    ])
    func aBadFileIsRefusedNamingTheDestinationAndMember(text: String, problem: String) {
        #expect {
            try Self.destinations(text)
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.variable == "IAP_WEBHOOKS_FILE" && error?.problem.contains(problem) == true
                && error?.problem.contains("0123456789abcdef") == false
        }
    }

    @Test func theDefaultIsIAP_WEBHOOK_URLAndAFileMayNotNameItToo() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"default": {"url": "https://b.example", "secret": "0123456789abcdef"}}"#.utf8).write(to: file)
        #expect {
            try PipelineConfiguration(environment: [
                "IAP_WEBHOOK_URL": "https://a.example", "IAP_WEBHOOK_SECRET": Self.secret, "IAP_WEBHOOKS_FILE": file.path,
            ])
        } throws: { ($0 as? ConfigurationError)?.problem.contains("names the destination default") == true }
        try Data(#"{"analytics": {"url": "https://b.example", "secret": "0123456789abcdef"}}"#.utf8).write(to: file)
        let both = try PipelineConfiguration(environment: [
            "IAP_WEBHOOK_URL": "https://a.example", "IAP_WEBHOOK_SECRET": Self.secret, "IAP_WEBHOOKS_FILE": file.path,
        ])
        #expect(try both.webhook.required().map(\.name) == ["default", "analytics"])
        #expect(try PipelineConfiguration(environment: ["IAP_WEBHOOKS_FILE": file.path]).webhook.required().map(\.name) == ["analytics"])
        #expect { try PipelineConfiguration(environment: [:]).webhook.required() } throws: {
            ($0 as? ConfigurationError)?.variable == "IAP_WEBHOOK_URL"
        }
    }

    @Test func aFilterTurnsAwayOnlyByAFieldTheEventHas() {
        let filter = WebhookFilter(apps: ["com.a"], environments: ["Production"], events: ["granted"])
        #expect(filter.admits(["event": "granted", "environment": "Production", "bundle_id": "com.a"]))
        #expect(filter.admits(["event": "granted"]), "an operator's grant names no environment or app")
        #expect(!filter.admits(["event": "revoked"]))
        #expect(!filter.admits(["event": "granted", "environment": "Sandbox"]))
        #expect(!filter.admits(["event": "granted", "bundle_id": "com.b"]))
        #expect(WebhookFilter.all.admits(["event": "anything"]))
    }
}

/// A consumer group's destination, as erasure, the user's events and migration read it.
struct WebhookGroupNameTests {
    @Test func aGroupNamesItsDestinationAndOtherGroupsNone() {
        #expect(RedisKeys.webhookDestination(ofGroup: "webhook") == "default")
        #expect(RedisKeys.webhookDestination(ofGroup: "webhook:analytics") == "analytics")
        #expect(RedisKeys.webhookDestination(ofGroup: RedisKeys.webhookGroup(to: "game")) == "game")
        for other in ["backend", "webhook:", "webhooks", "webhook:a:b"] { #expect(RedisKeys.webhookDestination(ofGroup: other) == nil) }
    }
}
