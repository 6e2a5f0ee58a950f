#!/usr/bin/env python3
"""Writes the sensitive-data guard corpus (positive.txt, negative.txt) from hand-written lines and templates.

Deterministic (fixed seed). Positive lines state something L21 forbids storing; negative lines are meeting talk
that looks similar (ids, dial-in numbers, timestamps, versions, order numbers, budgets, technical words).
Run from this folder: python3 generate.py
"""
import random

rng = random.Random(20261109)
NAMES = ["Alice", "Bob", "Dana", "Priya", "Sam", "Marco", "Yuki", "Omar", "Lena", "Chen", "Ines", "Tom"]
PEOPLE = ["my", "her", "his", "Alice's", "Bob's", "Dana's", "Priya's", "the new hire's", "Marco's", "their"]


def luhn_complete(prefix, length):
    digits = [int(d) for d in prefix]
    while len(digits) < length - 1:
        digits.append(rng.randrange(10))
    for check in range(10):
        total = 0
        for i, d in enumerate(reversed(digits + [check])):
            if i % 2 == 1:
                d *= 2
                if d > 9:
                    d -= 9
            total += d
        if total % 10 == 0:
            return "".join(map(str, digits + [check]))


def luhn_broken(prefix, length):
    good = luhn_complete(prefix, length)
    last = (int(good[-1]) + 1 + rng.randrange(8)) % 10
    return good[:-1] + str(last)


def group4(number, sep=" "):
    return sep.join(number[i:i + 4] for i in range(0, len(number), 4))


def iban(country, length):
    bban = "".join(str(rng.randrange(10)) for _ in range(length - 4))
    rearranged = bban + country + "00"
    numeric = "".join(str(int(ch, 36)) for ch in rearranged)
    check = 98 - int(numeric) % 97
    return f"{country}{check:02d}{bban}"


def money():
    kind = rng.randrange(6)
    if kind == 0:
        return f"${rng.randrange(40, 250)},{rng.randrange(0, 1000):03d}"
    if kind == 1:
        return f"{rng.randrange(40, 250)}k"
    if kind == 2:
        return f"€{rng.randrange(30, 200)}.000"
    if kind == 3:
        return f"{rng.randrange(40, 250)} thousand dollars"
    if kind == 4:
        return f"£{rng.randrange(30, 150)},000"
    return f"${rng.randrange(3, 20)}k"


positives = [
    # Hand-written.
    "My salary is 150k now.",
    "HR sent the new contract, my salary is 150k now.",
    "Bob makes $185,000 a year base salary.",
    "Her base pay went up to $142,000 after the promotion.",
    "I'm on 95 thousand euros a year, salary wise.",
    "The offer was a salary of 210k plus equity.",
    "My annual income is around $90,000.",
    "He earns $65 per hour as a contractor.",
    "Dana's bonus this year is $25,000.",
    "They're paying me $8,000 a month.",
    "My hourly rate is $120.",
    "I got a raise to $160k.",
    "Priya's compensation package is 230k total.",
    "The new hire's wage is $22 an hour.",
    "My paycheck is $4,200 every two weeks.",
    "Card number is 4111 1111 1111 1111, expiry 08/29.",
    "Use my Amex 3782 822463 10005 for the booking.",
    "Charge it to 5555 5555 5555 4444.",
    "My IBAN is DE89 3704 0044 0532 0130 00.",
    "Send it to GB82 WEST 1234 5698 7654 32.",
    "My SSN is 123-45-6789.",
    "Social security number 219-09-9999 for the background check.",
    "My passport number is 533380006.",
    "Her driver's license number is D1234567 issued in 2019.",
    "Account number 12345678, sort code 20-00-00.",
    "The routing number is 021000021 and the account number is 9876543210.",
    "My bank account number is 4456 7788 9900.",
    "My tax ID is 12-3456789.",
    "I owe $12,000 in back taxes to the IRS.",
    "My tax refund was $3,400 this year.",
    "I paid $18,000 in taxes last year.",
    "I was diagnosed with type 2 diabetes last spring.",
    "She was diagnosed with breast cancer in March.",
    "He's been in rehab since January.",
    "I have ADHD and take medication for it.",
    "My doctor says I have clinical depression.",
    "Bob has epilepsy, so no strobe lights at the offsite.",
    "She's pregnant, due in April.",
    "I'm on medical leave for my anxiety disorder.",
    "Marco was diagnosed with multiple sclerosis.",
    # Known limits of the guard, kept so the figures stay honest: no pay word next to the amount.
    "Bob makes 120k.",
    "Her base is 130k plus a 10% target.",
    "I take home about 6,000 a month.",
]
templates_pay = [
    "{who} salary is {m}.",
    "{who} base salary went up to {m}.",
    "{who} annual income is {m}.",
    "{who} bonus was {m} this year.",
    "The offer for {name} is {m} base salary.",
    "{name} earns {m} a year.",
    "{name} gets paid {m} a year.",
    "{name}'s compensation is {m} including stock.",
    "{who} take-home pay is {m} a year after the raise.",
    "We agreed on a salary of {m} for {name}.",
]
for i in range(70):
    t = templates_pay[i % len(templates_pay)]
    positives.append(t.format(who=rng.choice(PEOPLE).capitalize() if t.startswith("{who}") else rng.choice(PEOPLE),
                              name=rng.choice(NAMES), m=money()))
for i in range(12):
    positives.append(f"{rng.choice(NAMES)} charges ${rng.randrange(60, 300)} per hour.")
for prefix, length in [("4", 16), ("51", 16), ("53", 16), ("37", 15), ("6011", 16), ("4", 16)] * 5:
    number = luhn_complete(prefix, length)
    sep = rng.choice([" ", "-", ""])
    shown = group4(number, sep) if sep else number
    positives.append(rng.choice([
        f"My card is {shown}.",
        f"Put it on card {shown}, exp 11/28.",
        f"The company card number is {shown}.",
        f"{rng.choice(NAMES)} read out the card: {shown}.",
    ]))
for country, length in [("DE", 22), ("GB", 22), ("FR", 27), ("ES", 24), ("NL", 18), ("IT", 27)] * 3:
    if country in ("GB", "NL"):
        continue
    value = iban(country, length)
    spaced = group4(value) if rng.randrange(2) else value
    positives.append(rng.choice([f"My IBAN is {spaced}.", f"Wire it to {spaced}, please.", f"Bank details: IBAN {spaced}."]))
for i in range(20):
    area = rng.randrange(100, 665)
    ssn = f"{area:03d}-{rng.randrange(10, 99):02d}-{rng.randrange(1000, 9999):04d}"
    positives.append(rng.choice([f"My SSN is {ssn}.", f"{rng.choice(NAMES)}'s social security number is {ssn}.", f"SSN {ssn} for the payroll form."]))
for i in range(12):
    digits = "".join(str(rng.randrange(10)) for _ in range(rng.choice([8, 9, 10])))
    positives.append(rng.choice([
        f"My account number is {digits}.",
        f"The bank account number for {rng.choice(NAMES)} is {digits}.",
        f"Routing number {digits[:9]}, account number {digits}.",
        f"My passport number is {digits}.",
    ]))
conditions = ["diabetes", "depression", "cancer", "ADHD", "asthma", "bipolar disorder", "an eating disorder", "PTSD", "Crohn's disease", "epilepsy", "long covid", "a heart condition"]
for i in range(24):
    c = conditions[i % len(conditions)]
    positives.append(rng.choice([
        f"{rng.choice(NAMES)} was diagnosed with {c}.",
        f"I was diagnosed with {c} last year.",
        f"{rng.choice(NAMES)} has {c}, so she is out this week.",
        f"My doctor diagnosed me with {c}.",
    ]))
for i in range(10):
    positives.append(rng.choice([
        f"I owe ${rng.randrange(2, 40)},{rng.randrange(0, 1000):03d} in taxes.",
        f"My tax return shows ${rng.randrange(40, 300)},{rng.randrange(0, 1000):03d} of income.",
        f"{rng.choice(NAMES)} got a tax refund of ${rng.randrange(1, 9)},{rng.randrange(0, 1000):03d}.",
    ]))

negatives = [
    # Hand-written.
    "Meeting ID: 845 2291 0034, passcode 771902.",
    "Join by phone: +1 646 558 8656, meeting ID 812 3345 9921#.",
    "Dial 1-888-555-0199 and enter 4471# when prompted.",
    "The standup moved to 9:30 tomorrow.",
    "We shipped v2.4.1 last night.",
    "Order #4471-2290-1183 arrived damaged.",
    "PO 4500012345 is approved.",
    "Invoice INV-2026-00042 is overdue by two weeks.",
    "The tracking number is 1Z999AA10123456784.",
    "Bump the version to 10.15.7 before the release.",
    "The build 20231104.3 failed on the ARM runners.",
    "Ticket JIRA-4521 covers the login bug.",
    "Our cloud bill was $12,400 last month.",
    "Licenses cost $30 per seat per month.",
    "The booth at the conference cost $5,000.",
    "We set the retail price at 25 euros.",
    "The production cost per unit is twelve and a half euros.",
    "The payload is 4 KB on average.",
    "The pay-as-you-go plan is cheaper for us.",
    "We keep a bank of 40 GPUs for training.",
    "The card component needs a hover state.",
    "The health check endpoint returns 200.",
    "We need to pay down tech debt this quarter.",
    "Tax season is the busiest time for our accounting customers.",
    "Salary bands are published on the wiki.",
    "HR will share the compensation review timeline next week.",
    "The diagnosis tool flags flaky tests.",
    "The market is in a depression, says the analyst report.",
    "Our medical device client wants a demo on Friday.",
    "The patient portal project is on hold.",
    "The room code is 123-456-789.",
    "Call extension 4471 if the projector fails.",
    "Latency p99 is 230 ms after the fix.",
    "We have 120k users on the new plan.",
    "The dataset has 1,250,000 rows.",
    "We raised prices by 10% for new customers.",
    "Marketing spent $40,000 on the campaign.",
    "The remote control should cost under 25 euros to make.",
    "Sales were 4.2 million units last year.",
    # Known limits of the guard, kept so the figures stay honest: money next to a pay word, not pay.
    "We raised $2M in our seed round.",
    "We paid $5,000 for the booth at the fair.",
    "The bonus round of the game awards 500 points.",
    "Alice makes 120k requests per day to the API.",
]
# Templates for classic false positives.
def digits(n):
    return "".join(str(rng.randrange(10)) for _ in range(n))

gens = [
    lambda: f"Meeting ID: {digits(3)} {digits(4)} {digits(4)}",
    lambda: f"Passcode: {digits(6)}",
    lambda: f"Join Zoom meeting https://zoom.us/j/{digits(11)}?pwd={digits(8)}",
    lambda: f"Dial-in: +1 {digits(3)} {digits(3)} {digits(4)}, conference ID {digits(9)}#",
    lambda: f"Or dial +44 {digits(2)} {digits(4)} {digits(4)} and enter {digits(4)} {digits(4)}#.",
    lambda: f"Teams conference ID: {digits(3)} {digits(3)} {digits(3)}#",
    lambda: f"Phone conference ID {digits(9)}, then press #.",
    lambda: f"Call me at ({digits(3)}) {digits(3)}-{digits(4)} after lunch.",
    lambda: f"[{rng.randrange(0, 24):02d}:{rng.randrange(0, 60):02d}:{rng.randrange(0, 60):02d}] {rng.choice(NAMES)}: let's get started.",
    lambda: f"{rng.randrange(0, 3):02d}:{rng.randrange(0, 60):02d}:{rng.randrange(0, 60):02d}.{digits(3)} --> {rng.randrange(0, 3):02d}:{rng.randrange(0, 60):02d}:{rng.randrange(0, 60):02d}.{digits(3)}",
    lambda: f"The incident started at 2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(0, 24):02d}:{rng.randrange(0, 60):02d}:{rng.randrange(0, 60):02d}Z.",
    lambda: f"We rolled back at {rng.randrange(1, 13)}:{rng.randrange(0, 60):02d} pm.",
    lambda: f"Release v{rng.randrange(0, 20)}.{rng.randrange(0, 40)}.{rng.randrange(0, 200)} is tagged.",
    lambda: f"Upgrade the SDK from {rng.randrange(1, 9)}.{rng.randrange(0, 30)}.{rng.randrange(0, 30)} to {rng.randrange(1, 9)}.{rng.randrange(0, 30)}.{rng.randrange(0, 30)}.",
    lambda: f"Build {digits(8)}.{rng.randrange(1, 9)} is green.",
    lambda: f"Kernel {rng.randrange(4, 7)}.{rng.randrange(0, 20)}.{rng.randrange(0, 200)}-{digits(3)}-generic fixed the driver issue.",
    lambda: f"Order #{digits(4)}-{digits(4)}-{digits(4)} shipped on Monday.",
    lambda: f"Order number {digits(10)} is stuck in the warehouse.",
    lambda: f"PO {digits(10)} needs a second approval.",
    lambda: f"Invoice INV-{rng.randrange(2020, 2027)}-{digits(5)} was paid yesterday.",
    lambda: f"Invoice {digits(8)} is due at the end of the month.",
    lambda: f"Tracking number 1Z{digits(3)}AA1{digits(10)}.",
    lambda: f"The serial number is SN-{digits(4)}-{digits(4)}-{digits(4)}-{digits(4)}.",
    lambda: f"Serial {luhn_broken('4', 16)} is on the back of the device.",
    lambda: f"Ticket #{digits(5)} covers the flaky test.",
    lambda: f"See PR #{rng.randrange(10, 9999)} for the migration.",
    lambda: f"Commit {''.join(rng.choice('0123456789abcdef') for _ in range(12))} broke the build.",
    lambda: f"The request id was {digits(4)}-{digits(4)}-{digits(4)}-{digits(4)}.",
    lambda: f"Customer number {digits(9)} asked for a refund of the license.",
    lambda: f"The part number is {digits(3)}-{digits(2)}-{digits(4)}-{rng.choice('ABCD')}.",
    lambda: f"Room {rng.randrange(100, 999)}, building {rng.randrange(1, 9)}, floor {rng.randrange(1, 30)}.",
    lambda: f"Our AWS bill was ${rng.randrange(2, 90)},{digits(3)} in {rng.choice(['March', 'April', 'May', 'June'])}.",
    lambda: f"The license costs ${rng.randrange(5, 90)} per seat per month.",
    lambda: f"The project budget is ${rng.randrange(50, 900)}k for the year.",
    lambda: f"We'll charge customers ${rng.randrange(5, 99)} a month for the pro plan.",
    lambda: f"The remote should sell for {rng.randrange(15, 40)} euros.",
    lambda: f"Production cost must stay under {rng.randrange(8, 20)} euros per unit.",
    lambda: f"Revenue grew to ${rng.randrange(2, 90)} million this quarter.",
    lambda: f"The vendor quoted {rng.randrange(2, 90)},{digits(3)} euros for the pilot.",
    lambda: f"We have {rng.randrange(2, 900)}k monthly active users.",
    lambda: f"The table holds {rng.randrange(2, 900)} million rows.",
    lambda: f"p95 latency dropped to {rng.randrange(20, 900)} ms.",
    lambda: f"The cache hit rate is {rng.randrange(50, 99)}%.",
    lambda: f"We process {rng.randrange(2, 90)}k requests per second at peak.",
    lambda: f"The job takes {rng.randrange(2, 90)} minutes on {rng.randrange(2, 64)} cores.",
    lambda: f"Disk usage is at {rng.randrange(100, 900)} GB.",
    lambda: f"Port {rng.randrange(1024, 65535)} is blocked by the firewall.",
    lambda: f"Set the timeout to {rng.randrange(5, 120)} seconds.",
    lambda: f"The payload limit is {rng.randrange(1, 64)} MB.",
    lambda: f"Sprint {rng.randrange(1, 60)} ends on {rng.choice(['Friday', 'Thursday', 'the 14th'])}.",
    lambda: f"Q{rng.randrange(1, 5)} {rng.randrange(2024, 2028)} planning starts next week.",
    lambda: f"The meeting on {rng.randrange(1, 29)}/{rng.randrange(1, 13)}/{rng.randrange(2024, 2028)} is canceled.",
    lambda: f"{rng.choice(NAMES)} is leading the Atlas rollout.",
    lambda: f"{rng.choice(NAMES)} was promoted to Staff Engineer.",
    lambda: f"{rng.choice(NAMES)} is moving to {rng.choice(['Berlin', 'Lisbon', 'Austin', 'Tokyo'])} next month.",
    lambda: f"{rng.choice(NAMES)} joined Globex as a designer.",
    lambda: f"We canceled the {rng.choice(['Redis', 'Kafka', 'Postgres'])} migration.",
    lambda: f"The {rng.choice(['Atlas', 'Beacon', 'Nova'])} beta ships by {rng.choice(['Friday', 'November 20', '2026-12-01'])}.",
    lambda: f"The health check on port {rng.randrange(1000, 9999)} is failing.",
    lambda: f"The payment service handles {rng.randrange(2, 90)}k transactions a day.",
    lambda: f"The tax calculation module needs tests for {rng.randrange(2, 50)} countries.",
    lambda: f"The bank integration uses API version {rng.randrange(1, 9)}.{rng.randrange(0, 9)}.",
    lambda: f"Credit card form validation rejects {rng.randrange(2, 20)}% of inputs wrongly.",
    lambda: f"The medical records project kicks off on {rng.choice(['Monday', 'Tuesday'])}.",
    lambda: f"Our clinic scheduling client has {rng.randrange(2, 90)} sites.",
    lambda: f"Pay attention to the {rng.choice(['timeouts', 'retries', 'logs'])} in the dashboard.",
    lambda: f"The diagnosis page loads in {rng.randrange(100, 900)} ms.",
    lambda: f"We raised the rate limit to {rng.randrange(100, 9000)} requests per minute.",
    lambda: f"Bump the bonus points multiplier to {rng.randrange(2, 5)}x for the promo.",
    lambda: f"The salary benchmarking feature ships in v{rng.randrange(1, 9)}.{rng.randrange(0, 9)}.",
    lambda: f"Add a field for the user's income bracket to the survey design.",
    lambda: f"The remote has {rng.randrange(5, 40)} buttons and a scroll wheel.",
    lambda: f"The battery lasts {rng.randrange(2, 24)} months.",
    lambda: f"Fifty percent of users found it ugly, according to the survey of {rng.randrange(50, 900)} people.",
    lambda: f"The deadline for the report is {rng.choice(['Friday', 'the 12th', 'end of month'])}.",
    lambda: f"{rng.choice(NAMES)}, can you send the minutes by {rng.choice(['Friday', 'tomorrow', 'Monday'])}?",
    lambda: f"The Euro {rng.randrange(2020, 2027)} figures are in the appendix.",
    lambda: f"IBAN field must accept up to 34 characters.",
    lambda: f"Test IBAN {rng.choice(['DE', 'FR', 'ES'])}{digits(2)} {digits(4)} {digits(4)} {digits(4)} {digits(4)} {digits(2)} failed validation.",
    lambda: f"Account {rng.choice(['settings', 'recovery', 'deletion'])} flow has {rng.randrange(2, 9)} steps.",
    lambda: f"The {rng.choice(['routing', 'sorting'])} table has {rng.randrange(100, 9999)} entries.",
]
seen = set(negatives)
while len(negatives) < 1100:
    line = rng.choice(gens)()
    if line not in seen:
        seen.add(line)
        negatives.append(line)

header = "# Generated by generate.py (fixed seed) from hand-written lines and templates; one line per case.\n"
with open("positive.txt", "w") as out:
    out.write(header + "# Each line states something L21 forbids storing.\n")
    out.write("\n".join(positives) + "\n")
with open("negative.txt", "w") as out:
    out.write(header + "# Each line is ordinary meeting talk that must pass the guard.\n")
    out.write("\n".join(negatives) + "\n")
print(len(positives), len(negatives))
