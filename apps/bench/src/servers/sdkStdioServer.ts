/**
 * The SDK echo server over this process's stdin/stdout, loaded by
 * `sdkStdio.ts` once Node's compile cache is on.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import * as SdkEchoServer from "../SdkEchoServer.ts"

await SdkEchoServer.make().connect(new StdioServerTransport())
