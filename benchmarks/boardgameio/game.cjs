// A two-seat dice game for boardgame.io, shaped as the referee's bench game: each decision
// splits a roll of five dice into two pairs and a fifth die (CHOICE's move), marked on the
// player's sheet; 16 decisions each. The dice come from boardgame.io's seeded random plugin.
const { INVALID_MOVE } = require("boardgame.io/core");

const SPLITS = [];
for (let fifth = 0; fifth < 5; fifth++) {
  const rest = [0, 1, 2, 3, 4].filter((i) => i !== fifth);
  for (const partner of rest.slice(1)) {
    const pair = [rest[0], partner];
    SPLITS.push({ fifth, pairs: [pair, rest.filter((i) => !pair.includes(i))] });
  }
}

const DiceGame = {
  name: "dice",
  minPlayers: 2,
  maxPlayers: 2,
  setup: ({ ctx }) => ({
    dice: [],
    sheets: Array.from({ length: ctx.numPlayers }, () => ({ marks: {}, fifth: {}, rounds: 0 })),
  }),
  turn: {
    minMoves: 1,
    maxMoves: 1,
    onBegin: ({ G, random }) => {
      G.dice = random.D6(5);
    },
  },
  moves: {
    mark: ({ G, playerID, events }, split) => {
      const chosen = SPLITS[split];
      if (chosen === undefined) return INVALID_MOVE;
      const sheet = G.sheets[Number(playerID)];
      for (const pair of chosen.pairs) {
        const sum = G.dice[pair[0]] + G.dice[pair[1]];
        sheet.marks[sum] = (sheet.marks[sum] ?? 0) + 1;
      }
      const value = G.dice[chosen.fifth];
      sheet.fifth[value] = (sheet.fifth[value] ?? 0) + 1;
      sheet.rounds += 1;
      events.endTurn();
    },
  },
  endIf: ({ G }) => (G.sheets.every((sheet) => sheet.rounds >= 16) ? { draw: true } : undefined),
};

module.exports = { DiceGame, SPLITS };
