import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request is not read whole within `limit` of its head: a body dripped
/// in a byte at a time holds a connection and a task no longer than that. (Hummingbird's
/// `idleTimeout` covers a connection between requests, and one whose headers never end.)
///
/// The timer is set only when a read ends with the request still incomplete: a receipt arrives
/// whole in one read, and a timer set and cancelled per request cost 5 % of the intake's CPU.
final class RequestReadTimeout: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limit: TimeAmount
    /// When the request being read is to be whole; `nil`: none is being read.
    private var due: NIODeadline?
    private var timer: Scheduled<Void>?

    init(limit: Duration) {
        self.limit = TimeAmount(limit)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            stop()
            due = .now() + limit
        case .end:
            stop()
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    /// A read ended mid-request: the rest must come by the request's deadline.
    func channelReadComplete(context: ChannelHandlerContext) {
        if let due, timer == nil {
            let channel = context.channel
            timer = context.eventLoop.scheduleTask(deadline: due) { channel.close(promise: nil) }
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Answered before the body was read (a refusal): nothing more to wait for.
        if case .head = unwrapOutboundIn(data) { stop() }
        context.write(data, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private func stop() {
        timer?.cancel()
        timer = nil
        due = nil
    }
}
