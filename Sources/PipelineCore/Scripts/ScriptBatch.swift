import RedisClient

/// Several calls of one script in one, each as if called alone: the script's batch form
/// (`includes/each_job`: `ARGV[1]` is `batch` and each call's sizes, then each call's keys and
/// arguments in turn). The calls' keys must lie in one slot (one bucket's); the reply is each
/// call's own answer, for its caller to decode.
package struct ScriptBatch<Call: PipelineScript>: PipelineScript {
    package static var script: RedisScript { Call.script }
    package let keys: [String]
    package let arguments: [String]

    package init(_ calls: [Call]) {
        // Closures, not key paths: generic over the script, a key path is built anew at each call.
        var keys: [String] = []
        var arguments = [""]
        var sizes = "batch"
        for call in calls {
            let (own, ownArguments) = (call.keys, call.arguments)
            keys += own
            arguments += ownArguments
            sizes += " \(own.count) \(ownArguments.count)"
        }
        arguments[0] = sizes
        self.keys = keys
        self.arguments = arguments
    }

    package static func decode(_ reply: RedisReply) throws -> [RedisReply] {
        guard let answers = reply.array else { throw ScriptReplyError(script: name, reply: reply) }
        return answers
    }
}

extension PipelineStore {
    /// Runs several calls of a script in one (`ScriptBatch`), one answer each, in order. A call
    /// whose answer names keys to declare wrote nothing: it is called again alone, with them declared.
    package func runBatch<S: DeclaringScript>(_ calls: [S], replicated: Bool = false) async throws -> [S.Reply] {
        if calls.count <= 1 { return try await calls.isEmpty ? [] : [run(calls[0], replicated: replicated)] }
        let answers = try await run(ScriptBatch(calls), replicated: replicated).onePerItem(of: calls.count, script: S.name)
        var replies: [S.Reply] = []
        for (call, answer) in zip(calls, answers) {
            guard case .array(let items) = answer, items.first?.int == -2 else {
                replies.append(try S.decode(answer))
                continue
            }
            var again = call
            try again.declare(items.count > 1 ? items[1] : .null)
            replies.append(try await run(again, replicated: replicated))
        }
        return replies
    }
}
