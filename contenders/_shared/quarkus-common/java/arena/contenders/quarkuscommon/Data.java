package arena.contenders.quarkuscommon;

import java.util.List;

/** Study 002's record: what /data/{id} decodes from the downstream and /db/{id} from a row. */
public record Data(int id, String value, boolean active, List<String> props) {
}
