/// What a crash of the local cluster's Redis takes with it.
package enum RedisCrash: String, CaseIterable, Sendable, Codable {
    /// `kill -9` of redis-server: the kernel keeps every write Redis made, fsynced or not.
    case process
    /// `kill -9` of a redis-server running on `libPowerCut.so`: AOF writes not yet fsynced are gone
    /// as well, as after a power cut of the host at its worst.
    case powerCut = "power-cut"

    /// The preload library that makes a process crash a power cut; built with the executables.
    package static let library = "libPowerCut.so"
}
