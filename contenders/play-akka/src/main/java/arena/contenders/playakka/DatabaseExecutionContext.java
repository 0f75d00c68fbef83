package arena.contenders.playakka;

import akka.actor.ActorSystem;
import play.libs.concurrent.CustomExecutionContext;

/**
 * Play's "database execution context" (Play's ThreadPools docs): the Akka dispatcher
 * {@value #DISPATCHER} from application.conf, a thread pool of exactly as many threads as the
 * connection pool has connections, where the blocking JDBC calls run. Akka's default dispatcher,
 * which serves HTTP, the chat and the streams, never blocks.
 */
final class DatabaseExecutionContext extends CustomExecutionContext {

    static final String DISPATCHER = "database.dispatcher";

    DatabaseExecutionContext(ActorSystem actorSystem) {
        super(actorSystem, DISPATCHER);
    }
}
