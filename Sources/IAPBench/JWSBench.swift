import AppleJWS
import AppStoreServerAPI
import AppleSimulator
import Crypto
import Foundation

/// The `jws` scenario: how many Apple-shaped signed transactions one verifier thread verifies
/// per second of CPU, with the chain cache warm, beside a bare ES256 verify (the limit) and the
/// cost of the first, cold verification (chain building). No processes, no Redis.
package struct JWSBench: Sendable {
    package var tokens: Int
    package var runs: Int

    package init(tokens: Int = 2000, runs: Int = 5) {
        self.tokens = tokens
        self.runs = runs
    }

    package func run() async throws -> JWSBenchResult {
        let authority = try SigningAuthority()
        let signer = authority.signer
        let signed = try (0..<tokens).map { try signer.sign(payload: Self.payload($0)) }
        let verifier = SignedDataVerifier(rootCertificates: [authority.root])
        // Cold: the first token builds and checks the chain.
        let coldStart = ContinuousClock.now
        _ = try await verifier.verify(signed[0], as: JWSTransaction.self)
        let coldMs = (ContinuousClock.now - coldStart) / .milliseconds(1)
        // The limit: ES256 alone over the same signing inputs, timed right after each run of the
        // full checks, so that each pair meets the machine in the same state (a ratio per pair).
        let key = authority.leafKey.publicKey
        let inputs = try signed.map { token in
            let parts = token.split(separator: ".")
            return (Data((parts[0] + "." + parts[1]).utf8), try P256.Signing.ECDSASignature(rawRepresentation: Base64URL.decode(parts[2])!))
        }
        var rates: [Double] = []
        var bareRates: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<runs {
            var cpu = ProcessCPU.seconds()
            for token in signed {
                let transaction = try await verifier.verify(token, as: JWSTransaction.self)
                precondition(transaction.bundleID == Self.bundleID)
            }
            rates.append(Double(tokens) / max(ProcessCPU.seconds() - cpu, 1e-9))
            cpu = ProcessCPU.seconds()
            for (input, signature) in inputs { precondition(key.isValidSignature(signature, for: input)) }
            bareRates.append(Double(tokens) / max(ProcessCPU.seconds() - cpu, 1e-9))
            ratios.append(rates[rates.count - 1] / bareRates[bareRates.count - 1])
        }
        let (partsMicros, decodeMicros) = try Self.breakdown(signed)
        // A Server API token, signed anew for every request to Apple.
        let issuer = ServerAPIToken(
            keyID: "BENCHKEY01", issuerID: "57246542-96fe-1a63-e053-0824d011072a", privateKey: P256.Signing.PrivateKey(),
            bundleID: Self.bundleID)
        let tokenCPU = ProcessCPU.seconds()
        for _ in 0..<tokens { _ = try issuer.token() }
        let tokenMicros = (ProcessCPU.seconds() - tokenCPU) * 1_000_000 / Double(tokens)
        let median = rates.sorted()[rates.count / 2]
        return JWSBenchResult(
            tokens: tokens, runs: runs, jwsPerSecondPerCore: median, minPerSecond: rates.min() ?? 0,
            maxPerSecond: rates.max() ?? 0, microsecondsPerJWS: 1_000_000 / median,
            bareES256PerSecond: bareRates.sorted()[bareRates.count / 2], ofBareES256: ratios.sorted()[ratios.count / 2],
            coldFirstVerificationMs: coldMs, partsMicroseconds: partsMicros, payloadDecodeMicroseconds: decodeMicros,
            serverAPITokenMicroseconds: tokenMicros)
    }

    /// Where a verification's time beyond the ES256 check goes: taking the token apart (its
    /// segments decoded, the signing input copied) and reading the payload's JSON, CPU µs each.
    static func breakdown(_ signed: [String]) throws -> (parts: Double, decode: Double) {
        var cpu = ProcessCPU.seconds()
        var payloads: [[UInt8]] = []
        payloads.reserveCapacity(signed.count)
        for token in signed { payloads.append(try SignedDataVerifier.parts(of: token).payload) }
        let parts = (ProcessCPU.seconds() - cpu) * 1_000_000 / Double(signed.count)
        cpu = ProcessCPU.seconds()
        for payload in payloads {
            let transaction = try JWSTransaction.decode(signed: payload)
            precondition(transaction.bundleID == Self.bundleID)
        }
        return (parts, (ProcessCPU.seconds() - cpu) * 1_000_000 / Double(signed.count))
    }

    static let bundleID = "com.example.app"

    /// A transaction shaped like Apple's, with the fields the Python peer's payload has.
    static func payload(_ index: Int) -> [String: AnyCodable] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return [
            "transactionId": .string(String(2_000_000_000_000_000 + index)),
            "originalTransactionId": .string(String(2_000_000_000_000_000 + index)),
            "bundleId": .string(bundleID), "productId": .string("com.example.app.gold100"),
            "purchaseDate": .int(now - 60000), "originalPurchaseDate": .int(now - 60000), "quantity": .int(1),
            "type": .string("Consumable"), "inAppOwnershipType": .string("PURCHASED"), "signedDate": .int(now),
            "environment": .string("Sandbox"), "transactionReason": .string("PURCHASE"), "storefront": .string("USA"),
            "storefrontId": .string("143441"), "price": .int(990), "currency": .string("USD"),
            "appTransactionId": .string("704289572311220010"),
            "appAccountToken": .string(UUID().uuidString.lowercased()),
        ]
    }

    /// Just enough of a JSON value for the payloads above.
    enum AnyCodable: Encodable {
        case string(String)
        case int(Int64)

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .int(let value): try container.encode(value)
            }
        }
    }
}

/// What the `jws` scenario measured (`--json` gives every field).
package struct JWSBenchResult: Sendable, Codable {
    package var tokens: Int
    package var runs: Int
    /// Median over the runs: verified JWS per CPU second of one thread, chain cache warm.
    package var jwsPerSecondPerCore: Double
    package var minPerSecond: Double
    package var maxPerSecond: Double
    package var microsecondsPerJWS: Double
    /// A bare ES256 signature check per CPU second: the limit.
    package var bareES256PerSecond: Double
    /// Median over the runs of a run's JWS per second over the bare checks' timed just after it.
    package var ofBareES256: Double
    /// The first verification, which builds and checks the chain (cache cold).
    package var coldFirstVerificationMs: Double
    /// Taking a token apart (`SignedDataVerifier.parts`), CPU µs.
    package var partsMicroseconds: Double
    /// Reading a signed transaction's payload JSON, CPU µs.
    package var payloadDecodeMicroseconds: Double
    /// Signing one App Store Server API token (a new one per request), CPU µs.
    package var serverAPITokenMicroseconds: Double

    enum CodingKeys: String, CodingKey {
        case tokens, runs
        case jwsPerSecondPerCore = "jws_per_second_per_core"
        case minPerSecond = "min_per_second"
        case maxPerSecond = "max_per_second"
        case microsecondsPerJWS = "microseconds_per_jws"
        case bareES256PerSecond = "bare_es256_per_second"
        case ofBareES256 = "of_bare_es256"
        case coldFirstVerificationMs = "cold_first_verification_ms"
        case partsMicroseconds = "parts_us"
        case payloadDecodeMicroseconds = "payload_decode_us"
        case serverAPITokenMicroseconds = "server_api_token_microseconds"
    }
}

/// CPU seconds this process has used (user + system).
enum ProcessCPU {
    /// CPU of this process so far.
    static func seconds() -> Double { seconds(RUSAGE_SELF) }

    /// CPU of the children that ended and were waited for.
    static func childrenSeconds() -> Double { seconds(RUSAGE_CHILDREN) }

    private static func seconds(_ who: __rusage_who) -> Double {
        var usage = rusage()
        getrusage(who.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
    }
}
