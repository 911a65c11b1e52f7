import Foundation
import RedisClient
import TestSupport
import Testing

@testable import PipelineCore
@testable import IAPStages
@testable import IAPOperations

/// The scripts as code a reviewer reads and a Lua tool checks: one `.lua` file per command with
/// its contract in a header, includes that are only `local function`s, no variable a script
/// neither declares nor receives, each typed at the Swift edge.
@Suite struct LuaScriptTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/PipelineCore/Lua")

    static func luaFiles(in folder: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".lua") {
            files[String(name.dropLast(4))] = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        }
        return files
    }

    /// What Redis gives a script; anything else a script reads is a free variable.
    static let redisGlobals: Set<String> = [
        "redis", "cjson", "KEYS", "ARGV", "tonumber", "tostring", "type", "pairs", "ipairs", "unpack", "pcall", "string",
        "table", "math", "error", "assert", "select",
    ]

    @Test func everyFileIsOneTypedScriptAndEveryIncludeIsKnown() throws {
        let commands = try Self.luaFiles(in: Self.folder)
        #expect(Set(commands.keys) == Set(PipelineScripts.all.map { $0.name }))
        #expect(PipelineScripts.all.count == Set(PipelineScripts.all.map { $0.name }).count, "a script is listed twice")
        let includes = try Self.luaFiles(in: Self.folder.appendingPathComponent("includes"))
        #expect(Set(includes.keys) == Set(LuaSource.includes.keys))
        // The loader's table of commands, by which every target's script types find their Lua.
        #expect(Set(LuaSource.commands.keys) == Set(commands.keys))
        // The embedded bytes are the files' (a stale build would differ).
        for script in PipelineScripts.all {
            #expect(script.script.source == LuaSource.compose(commands[script.name] ?? ""), "\(script.name)")
        }
    }

    @Test func everyCommandHasItsContractInAHeader() throws {
        for (name, text) in try Self.luaFiles(in: Self.folder) {
            #expect(text.hasPrefix("#!lua\n--[[\n  \(name): "), "\(name): a `#!lua` line, then a header naming the script")
            // The header alone: a body that uses KEYS[1] does not stand in for its line in the contract.
            let header = text.components(separatedBy: "\n]]").first ?? ""
            for part in ["Input:", "KEYS[1]", "ARGV[1]", "Output:"] {
                #expect(header.contains(part), "\(name)'s header has no \(part)")
            }
        }
    }

    /// An include holds `local function`s and nothing else at its top level: no shared state.
    @Test func includesHoldOnlyLocalFunctions() throws {
        for (name, text) in try Self.luaFiles(in: Self.folder.appendingPathComponent("includes")) {
            var inHeader = false
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("--[[") { inHeader = true }
                if inHeader {
                    if line.hasPrefix("]]") { inHeader = false }
                    continue
                }
                guard let first = line.first, first != " " else { continue }
                let allowed = line.hasPrefix("local function ") || line == "end" || line.hasPrefix("--")
                #expect(allowed, "\(name): '\(line)' at the top level of an include")
            }
        }
    }

    /// luac (Lua 5.1, Redis's) compiles every script as Redis runs it (includes in), and lists
    /// the globals it reads and writes: none written, none read but Redis's own.
    @Test func luacFindsNoFreeVariableAndNoGlobalWrite() throws {
        let luac = "/usr/bin/luac5.1"
        try #require(FileManager.default.isExecutableFile(atPath: luac), "luac5.1 is missing: workers/deps --tests installs lua5.1")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("iap-luac-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        var sources = PipelineScripts.all.map { ($0.name, $0.script.source) }
        sources += LuaSource.includes.keys.map { ("include \($0)", LuaSource.compose("--- @include \"\($0)\"")) }
        for (name, source) in sources {
            let file = work.appendingPathComponent("script.lua")
            try source.write(to: file, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: luac)
            process.arguments = ["-p", "-l", file.path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let listing = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(name) does not compile: \(listing)")
            for line in listing.split(separator: "\n") where line.contains("GLOBAL") {
                let global = String(line.split(separator: ";").last ?? "").trimmingCharacters(in: .whitespaces)
                #expect(!line.contains("SETGLOBAL"), "\(name) writes the global \(global)")
                #expect(Self.redisGlobals.contains(global), "\(name) reads \(global), which it neither declares nor receives")
            }
        }
    }

    @Test func everyScriptLoadsIntoRedis() async throws {
        try await withRedis { redis, _ in
            for script in PipelineScripts.all {
                let sha = try await redis.send("SCRIPT", "LOAD", script.script.source).string
                #expect(sha?.count == 40, "\(script.name)")
            }
        }
    }

    /// A code the header does not list is an error that carries it, never a lost lease.
    @Test func anUnknownReplyCodeIsAnErrorCarryingIt() {
        #expect(throws: ScriptReplyError.self) { try ScheduleRetry.decode(.integer(7)) }
        #expect((try? ScheduleRetry.decode(.integer(0))) == .leaseLost)
        #expect(throws: ScriptReplyError.self) { try GrantPurchases.decode(.array([.integer(5)])) }
        #expect(throws: ScriptReplyError.self) { try GrantPurchases.decode(.array([.integer(1), .bulk(Array("lost".utf8))])) }
        #expect(throws: ScriptReplyError.self) { try ClaimPurchases.decode(.array([.integer(1), .integer(3)])) }
        do {
            _ = try FinishTicket.decode(.integer(42))
        } catch {
            #expect("\(error)".contains("42"))
        }
    }
}
