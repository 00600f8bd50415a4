/**
 * The SDK echo server over this process's stdin/stdout (W2, W5).
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import * as SdkEchoServer from "../SdkEchoServer.ts"

await SdkEchoServer.make().connect(new StdioServerTransport())
