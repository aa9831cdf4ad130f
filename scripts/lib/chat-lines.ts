/**
 * The write benches' chat lines (`bench-cluster.ts --default-config`, and the benches that replay its
 * workload): ~70-110 bytes, varied enough that consolidation keeps, merges and reinforces units as it does
 * with real chat, and the same line for the same number everywhere.
 */

const WHO = ['I', 'My sister', 'Our team lead', 'My neighbour Ana', 'The new intern', 'My partner', 'Grandpa Joe', 'Our landlord'];
const DID = ['started learning', 'finally finished', 'keeps talking about', 'signed up for', 'gave up on', 'is planning', 'recommended', 'complained about'];
const WHAT = ['the pottery class downtown', 'a trip to Lisbon in May', 'the quarterly budget review', 'a vegan lasagna recipe', 'the marathon in October',
  'the Rust rewrite of the billing service', 'a second-hand road bike', 'night shifts at the hospital', 'the book club on Thursdays', 'a puppy named Miso', 'Spanish lessons online'];
const WHY = ['because it helps with stress', 'since the kids moved out', 'after the doctor suggested it', 'to save some money this year', 'and it went better than expected', 'but the schedule is tight'];

export function chatLine(n: number): string {
  return `${WHO[n % WHO.length]} ${DID[(n >> 3) % DID.length]} ${WHAT[(n * 7 + (n >> 6)) % WHAT.length]} ${WHY[(n >> 2) % WHY.length]}.`;
}
