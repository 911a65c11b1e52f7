extension Duration {
    /// Whole milliseconds (rounded down): the unit of Redis scores, `WAIT`, `PX` and the `_MS` settings.
    public var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
