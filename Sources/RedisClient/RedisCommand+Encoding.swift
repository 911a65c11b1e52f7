import CHiredis
import NIOCore

extension RedisCommand {
    /// Appends the command in Redis's wire format, as hiredis formats it (`redisFormatCommandArgv`).
    func encode(into buffer: inout ByteBuffer) {
        precondition(!arguments.isEmpty, "a Redis command needs a name")
        var lengths: [Int] = []
        lengths.reserveCapacity(arguments.count)
        var total = 0
        for argument in arguments {
            lengths.append(argument.count)
            total += argument.count
        }
        // One flat copy of the arguments, so hiredis gets stable pointers into it.
        var flat: [UInt8] = []
        flat.reserveCapacity(total + 1)
        for argument in arguments { flat.append(contentsOf: argument) }
        flat.append(0)
        flat.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { chars in
                var argv: [UnsafePointer<CChar>?] = []
                argv.reserveCapacity(arguments.count)
                var offset = 0
                for length in lengths {
                    argv.append(chars.baseAddress! + offset)
                    offset += length
                }
                var target: UnsafeMutablePointer<CChar>?
                let written = argv.withUnsafeMutableBufferPointer { argvBuffer in
                    lengths.withUnsafeBufferPointer { lengthBuffer in
                        redisFormatCommandArgv(&target, Int32(arguments.count), argvBuffer.baseAddress!, lengthBuffer.baseAddress!)
                    }
                }
                guard written >= 0, let target else { fatalError("hiredis cannot format a command (out of memory)") }
                defer { redisFreeCommand(target) }
                buffer.writeBytes(UnsafeRawBufferPointer(start: target, count: Int(written)))
            }
        }
    }
}
