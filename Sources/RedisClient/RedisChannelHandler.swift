import NIOCore

/// What a caller hands the connection's channel.
enum RedisOutbound {
    /// Encoded commands and the promise of their replies, in order.
    case commands(ByteBuffer, count: Int, timeout: TimeAmount, promise: EventLoopPromise<[RedisReply]>)
    /// Waits for the next reply nobody asked for (a pub/sub message).
    case awaitPushed(timeout: TimeAmount, promise: EventLoopPromise<RedisReply>)
}

/// One Redis connection's protocol, on its event loop: writes commands as they come (many in
/// flight at once), parses replies with hiredis's reader, and matches them to callers in order.
/// Replies nobody waits for are pub/sub messages, kept for `awaitPushed`. A command not answered
/// in time, a protocol error or a closed socket fails every caller and closes the channel:
/// what the server did with the commands in flight is unknown, as with any lost connection.
final class RedisChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = RedisOutbound
    typealias OutboundOut = ByteBuffer

    private struct Waiting {
        var remaining: Int
        var replies: [RedisReply]
        let promise: EventLoopPromise<[RedisReply]>
        let deadline: NIODeadline
    }

    private let reader = HiredisReader()
    private var waiting = CircularBuffer<Waiting>(initialCapacity: 64)
    private var pushed = CircularBuffer<RedisReply>()
    private var pushWaiter: (promise: EventLoopPromise<RedisReply>, deadline: NIODeadline)?
    private var timer: (task: Scheduled<Void>, deadline: NIODeadline)?
    /// Set once the connection is over: every later request fails with it.
    private var failure: RedisError?
    /// A flush is queued on the event loop: later writes of this tick ride along with it.
    private var flushQueued = false

    /// This handler's place in its pipeline while it is in one.
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    /// Sends encoded commands straight from the connection, on the event loop: the hot path.
    ///
    /// Why not `channel.writeAndFlush`: that wraps the request in `NIOAny` (a dynamic cast), makes a
    /// promise of the write and walks the pipeline to this handler, about 4 thousand instructions a
    /// round trip (callgrind) for nothing the reply's promise does not already say: a write that
    /// fails closes the channel, and a closed channel fails every promise waiting here.
    func send(_ buffer: ByteBuffer, count: Int, timeout: TimeAmount, promise replies: EventLoopPromise<[RedisReply]>) {
        guard let context else {
            replies.fail(failure ?? .connectionLost("connection closed"))
            return
        }
        if enqueue(count: count, timeout: timeout, promise: replies, context: context) {
            context.write(wrapOutboundOut(buffer), promise: nil)
            flush(context: context)
        }
    }

    /// Waits for `count` replies unless the connection is over (then fails them at once): whether to write.
    private func enqueue(
        count: Int, timeout: TimeAmount, promise replies: EventLoopPromise<[RedisReply]>, context: ChannelHandlerContext
    ) -> Bool {
        if let failure {
            replies.fail(failure)
            return false
        }
        let deadline = NIODeadline.now() + timeout
        waiting.append(Waiting(remaining: count, replies: [], promise: replies, deadline: deadline))
        if count > 1 { waiting[waiting.index(before: waiting.endIndex)].replies.reserveCapacity(count) }
        arm(deadline, context: context)
        return true
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .commands(let buffer, let count, let timeout, let replies):
            guard enqueue(count: count, timeout: timeout, promise: replies, context: context) else {
                promise?.fail(failure ?? .connectionLost("connection closed"))
                return
            }
            context.write(wrapOutboundOut(buffer), promise: promise)
        case .awaitPushed(let timeout, let message):
            if let failure {
                message.fail(failure)
                promise?.succeed()
                return
            }
            if !pushed.isEmpty {
                message.succeed(pushed.removeFirst())
            } else if pushWaiter != nil {
                message.fail(RedisError.unexpectedReply("someone already waits for a pushed message"))
            } else {
                let deadline = NIODeadline.now() + timeout
                pushWaiter = (message, deadline)
                arm(deadline, context: context)
            }
            promise?.succeed()
        }
    }

    /// Flushes once per turn of the event loop, however many callers wrote meanwhile: under load
    /// the commands of many jobs leave in one write(2), and Redis reads them in one go.
    func flush(context: ChannelHandlerContext) {
        if flushQueued { return }
        flushQueued = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = loopBound.value
            handler.flushQueued = false
            context.flush()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let fed = buffer.withUnsafeReadableBytes { reader.feed($0) }
        do {
            guard fed else { throw RedisError.connectionLost("protocol error") }
            while let reply = try reader.next() { deliver(reply) }
        } catch {
            fail(context: context, error as? RedisError ?? .connectionLost("\(error)"))
        }
    }

    private func deliver(_ reply: RedisReply) {
        guard !waiting.isEmpty else {
            if let waiter = pushWaiter {
                pushWaiter = nil
                waiter.promise.succeed(reply)
            } else {
                pushed.append(reply)
            }
            return
        }
        let head = waiting.startIndex
        waiting[head].remaining -= 1
        if waiting[head].remaining == 0 && waiting[head].replies.isEmpty {
            // The common case, one command: no array to grow.
            waiting.removeFirst().promise.succeed([reply])
            return
        }
        waiting[head].replies.append(reply)
        if waiting[head].remaining == 0 {
            let done = waiting.removeFirst()
            done.promise.succeed(done.replies)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(.connectionLost("connection closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context: context, .connectionLost("\(error)"))
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failAll(.connectionLost("connection closed"))
        self.context = nil
    }

    private func fail(context: ChannelHandlerContext, _ error: RedisError) {
        failAll(error)
        context.close(promise: nil)
    }

    private func failAll(_ error: RedisError) {
        if failure == nil { failure = error }
        timer?.task.cancel()
        timer = nil
        while let next = waiting.popFirst() { next.promise.fail(error) }
        pushWaiter?.promise.fail(error)
        pushWaiter = nil
    }

    /// One timer per connection, set for the earliest deadline; it looks again when it fires.
    private func arm(_ deadline: NIODeadline, context: ChannelHandlerContext) {
        if let timer, timer.deadline <= deadline { return }
        timer?.task.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let task = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.timerFired(context: context)
        }
        timer = (task, deadline)
    }

    private func timerFired(context: ChannelHandlerContext) {
        timer = nil
        let now = NIODeadline.now()
        var earliest: NIODeadline?
        for entry in waiting { earliest = min(earliest ?? entry.deadline, entry.deadline) }
        if let pushWaiter { earliest = min(earliest ?? pushWaiter.deadline, pushWaiter.deadline) }
        guard let earliest else { return }
        if earliest <= now {
            fail(context: context, .connectionLost(waiting.isEmpty ? "no message in time" : "no reply in time"))
        } else {
            arm(earliest, context: context)
        }
    }
}
