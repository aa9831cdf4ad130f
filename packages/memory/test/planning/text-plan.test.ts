import { cleanTitle, extractTextPlan, mayContainPlan } from '../../src/planning';

const shape = (text: string): unknown => {
  const p = extractTextPlan(text);
  return p && { goal: p.goal, explicit: p.goal_explicit, steps: p.steps.map((s) => [s.title, s.depends_on]) };
};

describe('extractTextPlan', () => {
  it('reads a goal statement and inline numbered steps as a chain', () => {
    expect(shape('My goal is to move to Berlin. 1. Find an apartment 2. Register the address 3. Open a bank account')).toEqual({
      goal: 'Move to Berlin', explicit: true,
      steps: [['Find an apartment', []], ['Register the address', [0]], ['Open a bank account', [1]]],
    });
  });

  it('reads "2)" and "Step n:" numbering, one per line', () => {
    expect(shape('Goal: ship v2\n1) Freeze features.\n2) Fix the release bugs;\n3) Tag the release!')).toEqual({
      goal: 'Ship v2', explicit: true, steps: [['Freeze features', []], ['Fix the release bugs', [0]], ['Tag the release', [1]]],
    });
    expect(shape('I want to renovate the kitchen. Step 1: pick a design. Step 2: order the cabinets.')).toEqual({
      goal: 'Renovate the kitchen', explicit: false, steps: [['Pick a design', []], ['Order the cabinets', [0]]],
    });
  });

  it('reads a bulleted list under a goal', () => {
    expect(shape('Goal: run a marathon\n- buy shoes\n* join a club\n• run 3 times a week')).toEqual({
      goal: 'Run a marathon', explicit: true, steps: [['Buy shoes', []], ['Join a club', [0]], ['Run 3 times a week', [1]]],
    });
  });

  it('reads ordered prose', () => {
    expect(shape("I'm planning to move to Berlin: first find an apartment, then I need to register the address, after that open a bank account, and finally learn German. Wish me luck.")).toEqual({
      goal: 'Move to Berlin', explicit: false,
      steps: [['Find an apartment', []], ['Register the address', [0]], ['Open a bank account', [1]], ['Learn German', [2]]],
    });
  });

  it('honours "after X", "once X is done" and "before Y"', () => {
    expect(shape('1. Open a bank account after registering the address\n2. Register the address\n3. Celebrate')).toEqual({
      goal: null, explicit: false,
      steps: [['Open a bank account', [1]], ['Register the address', []], ['Celebrate', [1]]],
    });
    expect(shape('Goal: launch. 1. Write the copy 2. Deploy the site before writing the copy 3. Tell friends')).toEqual({
      goal: 'Launch', explicit: true,
      steps: [['Write the copy', [1]], ['Deploy the site', []], ['Tell friends', [1]]],
    });
    expect(shape('Goal: paint. 1. Buy paint 2. Tape the edges 3. Once the paint is bought, paint the walls')).toEqual({
      goal: 'Paint', explicit: true,
      steps: [['Buy paint', []], ['Tape the edges', [0]], ['Paint the walls', [0]]],
    });
  });

  it('keeps an "after" clause that names no step as text', () => {
    expect(shape('Goal: trip. 1. Look after the cat 2. Pack')).toEqual({
      goal: 'Trip', explicit: true, steps: [['Look after the cat', []], ['Pack', [0]]],
    });
  });

  it('drops a step with no words and keeps the chain through it', () => {
    expect(shape('Goal: paint. 1. Buy paint 2. ... 3. Paint the walls')).toEqual({
      goal: 'Paint', explicit: true, steps: [['Buy paint', []], ['Paint the walls', [0]]],
    });
  });

  it('makes no dependencies when the text says the steps are independent', () => {
    expect(shape('Errands, in any order: 1. book flights 2. book hotel 3. get visa')).toEqual({
      goal: null, explicit: false, steps: [['Book flights', []], ['Book hotel', []], ['Get visa', []]],
    });
  });

  it('does not take stray numbers for a list', () => {
    expect(extractTextPlan('I live at 12 Oak Street. I like pizza.')).toBeNull();
    expect(extractTextPlan('We met at 5) the pub and then 7) went home')).toBeNull();
    expect(shape('My goal is to get fit.')).toEqual({ goal: 'Get fit', explicit: true, steps: [] });
    expect(shape('I want to eat pizza.')).toEqual({ goal: 'Eat pizza', explicit: false, steps: [] });
    expect(shape('Yesterday I said I want to eat pizza.')).toBeNull(); // not at a sentence start
  });

  it('tells cheaply whether text may hold a plan', () => {
    expect(mayContainPlan('My goal is to learn Go')).toBe(true);
    expect(mayContainPlan('first the kitchen, then the bath')).toBe(true);
    expect(mayContainPlan('The weather is nice.')).toBe(false);
  });
});

describe('cleanTitle', () => {
  it('strips numbering, connectors, modals and trailing punctuation, and clips', () => {
    expect(cleanTitle('  2) and then I need to call the bank!!  ')).toBe('Call the bank');
    expect(cleanTitle("- we'll book the venue. It is urgent")).toBe('Book the venue');
    const long = cleanTitle('word '.repeat(60));
    expect(long.length).toBeLessThanOrEqual(120);
    expect(long.endsWith('…')).toBe(true);
  });
});
