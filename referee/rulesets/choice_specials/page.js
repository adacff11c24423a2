// CHOICE with special cards on the pages (served as /rulesets/choice-specials/page.js):
// CHOICE's board and picks, with the cards left and the leftovers plate.

import { drawBoard as choiceBoard, pickRows as choicePicks } from "/rulesets/choice/page.js";

export { choiceText, clicksOf, describeMove } from "/rulesets/choice/page.js";

export function drawBoard(view, kit) {
  return choiceBoard(view, kit, true);
}

export function pickRows(turn, kit, choosing) {
  return choicePicks(turn, kit, choosing, true);
}
