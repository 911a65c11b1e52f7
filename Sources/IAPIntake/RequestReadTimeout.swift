import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request is not read whole within `limit` of its head: a body dripped
/// in a byte at a time holds a connection and a task no longer than that. (Hummingbird's
/// `idleTimeout` covers a connection between requests, and one whose headers never end.)
final class RequestReadTimeout: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limit: TimeAmount
    private var deadline: Scheduled<Void>?

    init(limit: Duration) {
        self.limit = TimeAmount(limit)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            let channel = context.channel
            deadline = context.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Answered before the body was read (a refusal): nothing more to wait for.
        if case .head = unwrapOutboundIn(data) {
            deadline?.cancel()
            deadline = nil
        }
        context.write(data, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }
}
