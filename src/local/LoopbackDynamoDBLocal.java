// Amazon DynamoDB Local listening on loopback only (127.0.0.1), started as its own ServerRunner starts it.
//
// Why: DynamoDB Local has no bind-address option; its DynamoDBProxyServer builds a Jetty Server(port), whose one
// connector listens on every interface (IPv4 and IPv6), so anyone who can reach the machine could read and write the
// table (API key hashes included). This launcher builds the same server from the same command line
// (ServerRunner.createServerFromCommandLineArgs: -inMemory, -sharedDb, -disableTelemetry, -port, ...), sets its
// connectors' host to 127.0.0.1 before they bind, and starts it. local/engines.py runs it with DynamoDBLocal.jar on
// the class path: compiled once by `make install`, else in java's single-file source mode. Any failure to fence it (a
// later DynamoDB Local that builds its server differently) exits with status 70 and says so: the engine never runs
// unfenced.
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public final class LoopbackDynamoDBLocal {
    static final String HOST = "127.0.0.1";
    // EX_SOFTWARE: local/engines.py names it when the engine exits this way.
    static final int NOT_FENCED = 70;

    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        try {
            fence(proxy);
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println(
                "agent-memory: cannot bind DynamoDB Local to " + HOST + " only (" + e + "); not starting it");
            System.exit(NOT_FENCED);
        }
        // safeStart, not start: start() prints a failed bind (a port in use) and returns as if it had started.
        try {
            proxy.safeStart();
        } catch (Exception e) {
            // Jetty's threads may outlive a failed start: exit, so the parent sees the engine end.
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void fence(DynamoDBProxyServer proxy) throws ReflectiveOperationException {
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        Connector[] connectors = server.getConnectors();
        if (connectors.length == 0) {
            throw new IllegalStateException("the server has no connector");
        }
        for (Connector connector : connectors) {
            if (!(connector instanceof ServerConnector)) {
                throw new IllegalStateException("unexpected connector " + connector.getClass().getName());
            }
            ((ServerConnector) connector).setHost(HOST);
        }
    }
}
