package arena.contenders.quarkuscommon;

/**
 * The few JSON texts written by hand, where no Jackson mapper is at hand (a Vert.x filter) or
 * the text is a constant.
 */
public final class Json {

    /** The probes' answer. */
    public static final String UP = "{\"status\":\"UP\"}";

    private Json() {
    }

    /** {@code {"error": message}} with the message escaped as a JSON string. */
    public static String error(String message) {
        return "{\"error\":" + string(message) + "}";
    }

    static String string(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
