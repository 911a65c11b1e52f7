// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "iap-pipeline",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "iap-intake", targets: ["iap-intake"]),
        .executable(name: "iap-verifier", targets: ["iap-verifier"]),
        .executable(name: "iap-deduper", targets: ["iap-deduper"]),
        .executable(name: "iap-granter", targets: ["iap-granter"]),
        .executable(name: "iap-notifier", targets: ["iap-notifier"]),
        .executable(name: "iap-webhook", targets: ["iap-webhook"]),
        .executable(name: "iapctl", targets: ["iapctl"]),
        .executable(name: "iap-console", targets: ["iap-console"]),
        .executable(name: "apple-sim", targets: ["apple-sim"]),
        .executable(name: "iap-drill", targets: ["iap-drill"]),
        .executable(name: "iap-bench", targets: ["iap-bench"]),
        // Preloaded into redis-server by the drill to stand in for a power cut (libPowerCut.so).
        .library(name: "PowerCut", type: .dynamic, targets: ["CPowerCut"]),
        // Preloaded into a process the bench's grant-cost runs under valgrind (libSigsuspendCopy.so).
        .library(name: "SigsuspendCopy", type: .dynamic, targets: ["CSigsuspendCopy"]),
        // A game backend's client (docs/client-libraries.md): signs, submits, long-polls, reads
        // users, checks webhook signatures. Links nothing of the pipeline.
        .library(name: "IAPClient", targets: ["IAPClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
    ],
    targets: [
        .systemLibrary(
            name: "CHiredis",
            // hiredis installs into the default include path; its pkg-config file only adds a
            // -D flag that SwiftPM refuses with a warning, so the module map links it directly.
            providers: [.apt(["libhiredis-dev"])]
        ),
        .target(name: "CPowerCut"),
        .target(name: "CSigsuspendCopy"),
        .target(
            name: "RedisClient",
            dependencies: [
                "CHiredis",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "PlainJSON", swiftSettings: swiftSettings),
        // swift-metrics' handles kept once made (`MetricHandles`): below every module that records
        // a metric per request or job, Apple's calls included.
        .target(
            name: "IAPMetrics",
            dependencies: [.product(name: "Metrics", package: "swift-metrics")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LoopbackPort",
            dependencies: [.product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        // How the tests, the drill and the bench find and start redis-server, and poll what publishes no event.
        .target(name: "LocalServers", swiftSettings: swiftSettings),
        .target(
            name: "AppleReceipt",
            dependencies: [
                "AppleJWS",
                "IAPMetrics",
                "PlainJSON",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AppleJWS",
            dependencies: [
                "PlainJSON",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AppStoreServerAPI",
            dependencies: [
                "AppleJWS", "PlainJSON",
                "AppleReceipt",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            // Every setting described once (`Settings`) and how it is read (`SettingSource`):
            // flags over `IAP_*` variables, each checked against its kind and range.
            name: "IAPSettings",
            dependencies: [
                "AppleReceipt",
                "AppStoreServerAPI",
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            // The pipeline's core: the model, the key map, the Lua (one file per command) and its
            // loader, the queue half of the store (submit, take, forward, retry, dead-letter,
            // finish, reap, replay) and the worker runtime. It names no stage's step.
            name: "PipelineCore",
            dependencies: [
                "IAPMetrics",
                "IAPSettings",
                "RedisClient",
                "AppleReceipt",
                "AppleJWS",
                "PlainJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The Lua scripts, one file per command (Lua/*.lua, Lua/includes/*.lua), built into
            // the binary: nothing to ship beside an executable.
            resources: [.embedInCode("Lua")],
            swiftSettings: swiftSettings
        ),
        .target(
            // The stages, a folder each (Verify, Dedupe, Grant, Notify, Webhook): its handler, its
            // scripts' types, its steps on the store and its seams to Apple; and the settings
            // they are built from (`PipelineConfiguration`).
            name: "IAPStages",
            dependencies: [
                "IAPMetrics",
                "PipelineCore",
                "IAPSettings",
                "RedisClient",
                "AppleReceipt",
                "AppleJWS",
                "AppStoreServerAPI",
                "IAPClient",
                "PlainJSON",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            // What operators and support do beside the stages: the support desk, holds, offers,
            // operator grants and revokes, the stats, the ledger's migration, the standing sweeps.
            name: "IAPOperations",
            dependencies: [
                "IAPStages",
                "PipelineCore",
                "IAPSettings",
                "RedisClient",
                "AppleReceipt",
                "AppleJWS",
                "AppStoreServerAPI",
                "PlainJSON",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            // A game backend's client: signing (RequestSigner), the intake's API (PipelineClient),
            // webhook checks (WebhookVerifier). Links nothing of the pipeline, so a backend and
            // the load tools need not link the intake.
            name: "IAPClient",
            dependencies: [
                "PlainJSON",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IAPIntake",
            dependencies: [
                "IAPMetrics",
                "RedisClient",
                "PlainJSON",
                "IAPClient",
                "IAPOperations", "IAPSettings", "IAPStages", "PipelineCore",
                "AppleJWS",
                "AppStoreServerAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
            ],
            // The API as a document, built into the binary.
            resources: [.embedInCode("openapi.json")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AppleSimulator",
            dependencies: [
                "AppleReceipt",
                "AppleJWS",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ClusterHarness",
            dependencies: [
                "AppleJWS",
                "IAPStages", "PipelineCore",
                "AppleSimulator",
                "LocalServers",
                "LoopbackPort",
                "RedisClient",
                "IAPClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IAPDrill",
            dependencies: [
                "AppleJWS",
                "ClusterHarness", "IAPClient",
                "IAPOperations", "IAPStages", "PipelineCore", "PlainJSON",
                "AppleSimulator",
                "RedisClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IAPBench",
            dependencies: [
                "AppStoreServerAPI",
                "AppleJWS",
                "AppleReceipt",
                .product(name: "Crypto", package: "swift-crypto"),
                "ClusterHarness",
                "IAPClient",
                "IAPOperations", "IAPStages", "PipelineCore",
                "AppleSimulator",
                "LocalServers",
                "RedisClient",
                "LoopbackPort",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            // What every pipeline executable shares: logging, settings options, the process entry.
            name: "IAPCLI",
            dependencies: [
                "IAPSettings", "IAPStages", "PipelineCore",
                "RedisClient",
                "PlainJSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            // The console's pages (iap-console): sign-ins, sessions in Redis, same-origin and CSP
            // guards, Mustache templates embedded in the code; reads the operations room, never
            // the intake.
            name: "IAPConsole",
            dependencies: [
                "IAPOperations", "IAPSettings", "IAPStages", "PipelineCore",
                "RedisClient",
                "PlainJSON",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IAPConsoleCLI",
            dependencies: [
                "IAPCLI", "IAPConsole", "IAPOperations", "IAPSettings", "IAPStages", "PipelineCore",
                "RedisClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IAPIntakeCLI",
            dependencies: [
                "IAPCLI",
                "IAPIntake",
                "IAPOperations", "IAPStages", "PipelineCore",
                "RedisClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IAPWorkerCLI",
            dependencies: [
                "IAPCLI",
                "IAPOperations", "IAPSettings", "IAPStages", "PipelineCore",
                "AppleJWS",
                "AppleReceipt",
                "AppStoreServerAPI",
                "RedisClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IAPControlCLI",
            dependencies: [
                "AppStoreServerAPI",
                "IAPCLI", "IAPConsoleCLI",
                "IAPOperations", "IAPSettings", "IAPStages", "PipelineCore",
                "AppleReceipt",
                "RedisClient",
                "PlainJSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IAPToolsCLI",
            dependencies: [
                "IAPCLI",
                "IAPStages", "PipelineCore",
                "ClusterHarness",
                "IAPDrill",
                "IAPBench",
                "AppleSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "iap-intake", dependencies: ["IAPIntakeCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "iap-verifier", dependencies: ["IAPWorkerCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "iap-deduper", dependencies: ["IAPWorkerCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "iap-granter", dependencies: ["IAPWorkerCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "iap-notifier", dependencies: ["IAPWorkerCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "iap-webhook", dependencies: ["IAPWorkerCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "iapctl", dependencies: ["IAPControlCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "iap-console", dependencies: ["IAPConsoleCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "apple-sim", dependencies: ["IAPToolsCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "iap-drill", dependencies: ["IAPToolsCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "iap-bench", dependencies: ["IAPToolsCLI"], swiftSettings: swiftSettings),
        .target(
            name: "TestSupport",
            dependencies: [
                "RedisClient", "LocalServers", "LoopbackPort",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RedisClientTests",
            dependencies: ["RedisClient", "TestSupport", "LoopbackPort", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IAPDrillTests",
            dependencies: [
                "AppleJWS",
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                "IAPDrill", "IAPBench", "ClusterHarness", "IAPIntake", "IAPClient", "IAPOperations", "IAPStages", "PipelineCore", "RedisClient", "AppleSimulator", "LoopbackPort",
                "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppleJWSTests",
            dependencies: [
                "AppleJWS", "AppleSimulator",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "IAPCLI", "IAPIntakeCLI", "IAPWorkerCLI", "IAPControlCLI", "IAPConsoleCLI", "IAPSettings", "IAPStages", "PipelineCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PlainJSONTests",
            dependencies: ["PlainJSON"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppleReceiptTests",
            dependencies: ["AppleJWS", "AppleReceipt", "PlainJSON"],
            swiftSettings: swiftSettings
        ),
        // The whole pipeline in one process (intake, workers, apple-sim) for the end-to-end suites.
        .target(
            name: "PipelineTestSupport",
            dependencies: [
                "AppleJWS", "AppleReceipt", "AppStoreServerAPI", "AppleSimulator", "IAPCLI", "IAPIntake", "IAPOperations", "IAPSettings", "IAPStages", "PipelineCore", "RedisClient",
                "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/PipelineTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IAPIntakeTests",
            dependencies: [
                "AppleJWS",
                "IAPIntake", "IAPClient", "IAPOperations", "IAPSettings", "IAPStages", "PipelineCore", "PipelineTestSupport", "RedisClient", "TestSupport", "LoopbackPort", "AppleSimulator",
                "LocalServers",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppStoreServerAPITests",
            dependencies: [
                "AppStoreServerAPI", "AppleJWS", "AppleSimulator", "IAPOperations", "IAPStages", "PipelineCore", "PipelineTestSupport", "RedisClient", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppleSimulatorTests",
            dependencies: [
                "AppleReceipt", "AppleSimulator", "LoopbackPort", "PipelineTestSupport", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // A test target per library target, so a core test cannot reach a stage (swift-nio's
        // layout); the end-to-end suites, which run the whole pipeline, apart in IAPPipelineTests.
        .testTarget(
            name: "IAPMetricsTests",
            dependencies: ["IAPMetrics", .product(name: "Metrics", package: "swift-metrics")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PipelineCoreTests",
            dependencies: [
                "AppleJWS", "AppleReceipt", "PipelineCore", "PlainJSON", "RedisClient", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IAPStagesTests",
            dependencies: [
                "AppStoreServerAPI", "AppleJWS", "AppleReceipt", "AppleSimulator", "IAPClient", "IAPControlCLI", "IAPIntake", "IAPOperations",
                "IAPSettings", "IAPStages", "LoopbackPort", "PipelineCore", "PipelineTestSupport", "RedisClient", "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IAPOperationsTests",
            dependencies: [
                "AppStoreServerAPI", "AppleJWS", "AppleSimulator", "IAPControlCLI", "IAPOperations", "IAPStages", "PipelineCore", "PlainJSON",
                "PipelineTestSupport", "RedisClient", "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IAPConsoleTests",
            dependencies: [
                "AppleJWS", "IAPConsole", "IAPOperations", "IAPSettings", "IAPStages", "LoopbackPort", "PipelineCore", "PipelineTestSupport",
                "PlainJSON", "RedisClient", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IAPPipelineTests",
            dependencies: [
                "AppStoreServerAPI", "AppleJWS", "AppleReceipt", "AppleSimulator", "IAPCLI", "IAPClient", "IAPConsole", "IAPControlCLI", "IAPIntake", "IAPOperations",
                "IAPSettings", "IAPStages", "LoopbackPort", "PipelineCore", "PipelineTestSupport", "RedisClient", "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
