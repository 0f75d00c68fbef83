package arena.netty;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.ReferenceCountUtil;

/**
 * Netty's HttpObjectAggregator, with its own refusals (a body over the limit, an expectation
 * it cannot meet) answered with the contract's JSON error body instead of an empty one.
 */
final class JsonAggregator extends HttpObjectAggregator {

    JsonAggregator(int maxContentLength) {
        super(maxContentLength);
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) throws Exception {
        if (!(oversized instanceof HttpRequest)) {
            super.handleOversizedMessage(ctx, oversized);
            return;
        }
        FullHttpResponse response = Responses.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                "request body over " + maxContentLength() + " bytes");
        HttpUtil.setKeepAlive(response, false);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    protected Object newContinueResponse(HttpMessage start, int maxContentLength, ChannelPipeline pipeline) {
        String expect = start.headers().get(HttpHeaderNames.EXPECT);
        Object answer = super.newContinueResponse(start, maxContentLength, pipeline);
        if (answer instanceof FullHttpResponse refusal && refusal.status().code() >= 400) {
            FullHttpResponse json = Responses.error(refusal.status(),
                    refusal.status().equals(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE)
                            ? "request body over " + maxContentLength + " bytes"
                            : "cannot meet Expect: " + expect);
            HttpUtil.setKeepAlive(json, HttpUtil.isKeepAlive(refusal));
            ReferenceCountUtil.release(refusal);
            return json;
        }
        return answer;
    }
}
