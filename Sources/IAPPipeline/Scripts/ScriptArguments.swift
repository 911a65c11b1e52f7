import PlainJSON

/// The named arguments of a script: one JSON object it reads with `cjson.decode`. Numbers travel
/// as strings where Redis stores them, because cjson reads numbers as doubles.
protocol ScriptArguments {
    var json: JSONValue { get }
}

extension ScriptArguments {
    /// The script's argument: the canonical JSON text.
    var argument: String { json.canonicalText }
}
