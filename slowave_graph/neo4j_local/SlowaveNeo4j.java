import java.nio.file.Path;
import java.util.Map;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Starts a Neo4j Community DBMS (with its Bolt connector) from the jars on the class path.
 *
 * <p>Usage: {@code java -cp LAUNCHER_JAR:NEO4J_JARS… SlowaveNeo4j HOME_DIR CONFIG_FILE} (slowave-graph
 * compiles this file once with javac and caches the class in a jar). CONFIG_FILE holds
 * neo4j.conf settings (key=value lines). If the environment variable SLOWAVE_NEO4J_PASSWORD is set,
 * the built-in user neo4j gets that password (no forced change). Prints one line
 * "SLOWAVE_NEO4J_READY" when Bolt is accepting connections; SIGTERM shuts the DBMS down cleanly.
 */
public final class SlowaveNeo4j {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: SlowaveNeo4j HOME_DIR CONFIG_FILE");
            System.exit(2);
        }
        // loadPropertiesFromFile exists on both 5.26 and 2026.x (setConfigRaw does not).
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(Path.of(args[0]))
                .loadPropertiesFromFile(Path.of(args[1]))
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown, "slowave-neo4j-shutdown"));

        String password = System.getenv("SLOWAVE_NEO4J_PASSWORD");
        if (password != null && !password.isEmpty()) {
            setPassword(dbms, password);
        }
        System.out.println("SLOWAVE_NEO4J_READY");
        System.out.flush();
        Thread.currentThread().join();
    }

    /** Embedded access to the system database is trusted, so this works whatever the old password was. */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        try {
            dbms.database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException e) {
            // Neo4j refuses to "change" a password to the one already set; that is the state we want.
            String message = String.valueOf(e.getMessage());
            if (!message.contains("same")) {
                throw e;
            }
        }
    }
}
