package hello;

import io.undertow.Undertow;
import io.undertow.util.Headers;

/** Undertow's hello world, answering /instant on the IO thread. */
public class Main {

    public static void main(String[] args) {
        Undertow.builder()
                .addHttpListener(Integer.parseInt(System.getenv("PORT")), "127.0.0.1")
                .setHandler(exchange -> {
                    if ("/instant".equals(exchange.getRequestPath())) {
                        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "text/plain");
                        exchange.getResponseSender().send("INSTANT");
                    } else {
                        exchange.setStatusCode(404).endExchange();
                    }
                })
                .build()
                .start();
    }
}
