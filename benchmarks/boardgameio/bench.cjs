// boardgame.io's side of benchmarks/versus_boardgameio.py: `node bench.cjs --games 32
// --seconds 20` starts a boardgame.io server (in memory) in a child process and plays
// that many two-seat games at once from this one, through boardgame.io's socket.io
// client, starting a new game whenever one ends; prints one JSON line: decisions/s and the
// latency of a decision (sent until its new state is in the player's hands).
const { fork } = require("node:child_process");
const { DiceGame } = require("./game.cjs");

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith("--") ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);

if (args.serve) {
  const { Server } = require("boardgame.io/server");
  const server = Server({ games: [DiceGame], origins: ["http://127.0.0.1"] });
  server.run(Number(args.serve), () => process.send?.("ready"));
  // the bench that forked it is gone (done, killed or timed out): so is this server, else it
  // keeps the port and the next run waits forever for a server that cannot listen
  process.on("disconnect", () => process.exit(0));
} else {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

async function main() {
  const { Client } = require("boardgame.io/client");
  const { SocketIO } = require("boardgame.io/multiplayer");
  const games = Number(args.games ?? 32);
  const seconds = Number(args.seconds ?? 20);
  const port = Number(args.port ?? 8766);
  const url = `http://127.0.0.1:${port}`;
  const server = fork(__filename, ["--serve", String(port)], { stdio: "inherit" });
  await new Promise((resolve, reject) => {
    server.once("message", resolve);
    server.once("exit", (code) => reject(new Error(`boardgame.io's server exited (${code}) before it listened: is port ${port} taken?`)));
  });
  const latencies = [];
  let decisions = 0;
  let finished = 0;
  const stop = Date.now() + seconds * 1000;
  const post = async (path, body) => {
    const reply = await fetch(url + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return reply.json();
  };

  async function table() {
    while (Date.now() < stop) {
      const { matchID } = await post("/games/dice/create", { numPlayers: 2 });
      const seats = [];
      for (const playerID of ["0", "1"]) {
        const { playerCredentials } = await post(`/games/dice/${matchID}/join`, { playerID, playerName: `p${playerID}` });
        seats.push({ playerID, credentials: playerCredentials });
      }
      await Promise.all(seats.map((seat) => play(matchID, seat)));
      finished += 1;
    }
  }

  function play(matchID, { playerID, credentials }) {
    return new Promise((resolve) => {
      const client = Client({ game: DiceGame, multiplayer: SocketIO({ server: url }), matchID, playerID, credentials, debug: false });
      let sentAt = 0;
      let lastState = -1;
      // a client that hears nothing more once time is up (now and then one's last update never
      // comes, and the run waited for it forever) is let go: nothing after the stop is counted
      const giveUp = setTimeout(() => {
        client.stop();
        resolve();
      }, Math.max(0, stop - Date.now()) + 3000);
      client.subscribe((state) => {
        if (state === null || state._stateID === lastState) return;
        lastState = state._stateID;
        const now = performance.now();
        if (sentAt) {
          if (Date.now() < stop) {
            latencies.push(now - sentAt);
            decisions += 1;
          }
          sentAt = 0;
        }
        if (state.ctx.gameover || Date.now() >= stop) {
          clearTimeout(giveUp);
          client.stop();
          resolve();
          return;
        }
        if (state.ctx.currentPlayer === playerID) {
          sentAt = performance.now();
          client.moves.mark(0); // the first legal move, as the referee's bench bots play
        }
      });
      client.start();
    });
  }

  const began = performance.now();
  await Promise.all(Array.from({ length: games }, table));
  const elapsed = Math.min((performance.now() - began) / 1000, seconds);
  server.kill();
  latencies.sort((a, b) => a - b);
  const p99 = latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] : null;
  console.log(JSON.stringify({ system: "boardgame.io 0.50.2", games, seconds: elapsed, decisions, decisions_per_s: decisions / elapsed, p99_ms: p99, games_finished: finished }));
  process.exit(0);
}
