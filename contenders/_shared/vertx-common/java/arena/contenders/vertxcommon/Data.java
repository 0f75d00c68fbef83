package arena.contenders.vertxcommon;

import java.util.List;

/** The typed record that /data/{id} decodes the downstream JSON into and encodes back (study 002). */
public record Data(int id, String value, boolean active, List<String> props) {
}
