package arena.contenders.playakka;

import play.libs.Json;
import play.mvc.Result;
import play.mvc.Results;

/** The contract's error answer: {@code {"error":"..."}} as application/json with a status. */
final class Errors {

    private Errors() {
    }

    static Result json(int status, String message) {
        // Results.status(int, JsonNode) writes application/json with Play's Jackson mapper.
        return Results.status(status, Json.newObject().put("error", message));
    }
}
