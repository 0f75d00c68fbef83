package arena.contenders.vertxbus;

import java.net.URI;

/** Where /data/{id} fetches from, parsed once from DOWNSTREAM_URL. */
record Downstream(String host, int port, boolean ssl, String basePath) {

    static Downstream parse(String url) {
        URI uri = URI.create(url);
        boolean ssl = "https".equalsIgnoreCase(uri.getScheme());
        if (!ssl && !"http".equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException("DOWNSTREAM_URL must be http(s)://host[:port][/path], got " + url);
        }
        int port = uri.getPort() != -1 ? uri.getPort() : ssl ? 443 : 80;
        String path = uri.getRawPath() == null ? "" : uri.getRawPath().replaceAll("/+$", "");
        return new Downstream(uri.getHost(), port, ssl, path);
    }

    /** The request URI of data{id}.json on the downstream. */
    String dataUri(int id) {
        return basePath + "/resources/data" + id + ".json";
    }
}
