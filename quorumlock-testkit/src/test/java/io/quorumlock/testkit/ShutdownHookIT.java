package io.quorumlock.testkit;

import org.junit.jupiter.api.Test;

class ShutdownHookIT {

    @Test
    void aJvmThatIsInterruptedLeavesNoNodeBehind() throws Exception {
        Clients.assertInterruptedJvmLeavesNothing(Demo.class, "redis-server");
    }

    /** A demo that starts a node and runs until it is interrupted. */
    static final class Demo {
        public static void main(String[] args) throws InterruptedException {
            RedisServer node = RedisServer.start();
            System.out.println(node.pid());
            System.out.println(node.dir());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
