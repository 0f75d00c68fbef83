package arena.contender;

import java.util.List;

/** The typed shape of /resources/dataN.json: /data/{id} decodes into it and encodes it back. */
public record Data(int id, String value, boolean active, List<String> props) {
}
