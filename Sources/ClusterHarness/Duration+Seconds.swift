extension Duration {
    /// The duration in seconds, for the drill's and the bench's printed figures.
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
